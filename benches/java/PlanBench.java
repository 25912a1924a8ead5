import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Files;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.ExpressionParser;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;

/**
 * Times Apache Iceberg Java's scan planning (TableScan.planFiles) inside the JVM, driven by
 * benches/bench_plan.py over stdin so that its rounds interleave with the Python planners.
 *
 * <p>Usage: java -cp runtime.jar:slf4j-api.jar:classes PlanBench metadata.json [reopen]. Commands,
 * one a line, each answered by one line ("error ..." on failure):
 *
 * <ul>
 *   <li>"define NAME SNAPSHOT_ID FILTER_JSON": a case; the filter in ExpressionParser's JSON,
 *       bound to the table schema. Reply "ok".
 *   <li>"check NAME": plan once and reply "files delete-refs distinct-deletes sha256", the hash
 *       over the sorted lines "data-path TAB sorted delete paths joined by TAB" (untimed).
 *   <li>"warm NAME N": N untimed plans. Reply "ok".
 *   <li>"time NAME [N]": N (default 1) timed plans back to back; reply "wall-ns
 *       process-cpu-ns files delete-refs", the times summed over the N plans.
 *   <li>"quit".
 * </ul>
 *
 * <p>Each plan scans a table loaded once (StaticTableOperations + BaseTable), as a user plans
 * on a table they hold: its snapshots keep their manifest lists once read (BaseSnapshot caches
 * them). With "reopen", each plan opens the table from its metadata file first. Each plan
 * iterates planFiles(), touching every task's data file location and delete files. Planning
 * uses Iceberg's default worker pool (one thread per core), as a user's scan would.
 */
public class PlanBench {
  /** Local files only: the runtime jar ships no Hadoop, so HadoopFileIO cannot be used. */
  static final class LocalFileIO implements FileIO {
    @Override
    public InputFile newInputFile(String path) {
      return Files.localInput(path);
    }

    @Override
    public OutputFile newOutputFile(String path) {
      return Files.localOutput(path);
    }

    @Override
    public void deleteFile(String path) {
      throw new UnsupportedOperationException("read-only benchmark");
    }
  }

  static final class Case {
    final long snapshotId;
    final String filterJson;

    Case(long snapshotId, String filterJson) {
      this.snapshotId = snapshotId;
      this.filterJson = filterJson;
    }
  }

  private final String metadata;
  private final boolean reopen;
  private final FileIO io = new LocalFileIO();
  private final Map<String, Case> cases = new HashMap<>();
  private final Table loaded;

  PlanBench(String metadata, boolean reopen) {
    this.metadata = metadata;
    this.reopen = reopen;
    this.loaded = open();
    loaded.schema(); // reads the metadata file now
  }

  private Table open() {
    return new BaseTable(new StaticTableOperations(metadata, io), "bench");
  }

  private TableScan scan(Case c) {
    Table table = reopen ? open() : loaded;
    Expression filter = ExpressionParser.fromJson(c.filterJson, table.schema());
    return table.newScan().useSnapshot(c.snapshotId).filter(filter);
  }

  /** One plan; returns {files, delete refs, chars of paths} so the JIT keeps the work. */
  private long[] plan(Case c) throws Exception {
    long files = 0;
    long deletes = 0;
    long chars = 0;
    try (CloseableIterable<FileScanTask> tasks = scan(c).planFiles()) {
      for (FileScanTask task : tasks) {
        files += 1;
        chars += task.file().location().length();
        for (DeleteFile delete : task.deletes()) {
          deletes += 1;
          chars += delete.location().length();
        }
      }
    }
    return new long[] {files, deletes, chars};
  }

  private String check(Case c) throws Exception {
    List<String> lines = new ArrayList<>();
    Set<String> distinct = new HashSet<>();
    long refs = 0;
    try (CloseableIterable<FileScanTask> tasks = scan(c).planFiles()) {
      for (FileScanTask task : tasks) {
        List<String> deletes = new ArrayList<>();
        for (DeleteFile delete : task.deletes()) {
          deletes.add(delete.location());
        }
        Collections.sort(deletes);
        distinct.addAll(deletes);
        refs += deletes.size();
        StringBuilder line = new StringBuilder(task.file().location());
        for (String d : deletes) {
          line.append('\t').append(d);
        }
        lines.add(line.toString());
      }
    }
    // The paths are ASCII, so String order (UTF-16 units) is Python's order too.
    Collections.sort(lines);
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    for (String line : lines) {
      sha.update(line.getBytes(StandardCharsets.UTF_8));
      sha.update((byte) '\n');
    }
    StringBuilder hex = new StringBuilder();
    for (byte b : sha.digest()) {
      hex.append(String.format("%02x", b));
    }
    return lines.size() + " " + refs + " " + distinct.size() + " " + hex;
  }

  private Case get(String name) {
    Case c = cases.get(name);
    if (c == null) {
      throw new IllegalArgumentException("unknown case " + name);
    }
    return c;
  }

  private String handle(String line) throws Exception {
    String[] parts = line.split(" ", 4);
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    switch (parts[0]) {
      case "define":
        cases.put(parts[1], new Case(Long.parseLong(parts[2]), parts[3]));
        // Parse and bind now, so a bad filter fails here rather than in a timed plan.
        scan(cases.get(parts[1]));
        return "ok";
      case "check":
        return check(get(parts[1]));
      case "warm":
        for (int i = 0; i < Integer.parseInt(parts[2]); i++) {
          plan(get(parts[1]));
        }
        return "ok";
      case "time":
        Case c = get(parts[1]);
        int repeat = parts.length > 2 ? Integer.parseInt(parts[2]) : 1;
        long proc = os.getProcessCpuTime();
        long wall = System.nanoTime();
        long[] result = plan(c);
        for (int i = 1; i < repeat; i++) {
          result = plan(c);
        }
        wall = System.nanoTime() - wall;
        proc = os.getProcessCpuTime() - proc;
        if (result[0] > 0 && result[2] == 0) {
          throw new IllegalStateException("no file paths were read");
        }
        return wall + " " + proc + " " + result[0] + " " + result[1];
      default:
        throw new IllegalArgumentException("unknown command " + parts[0]);
    }
  }

  public static void main(String[] args) throws Exception {
    PlanBench bench = new PlanBench(args[0], args.length > 1 && args[1].equals("reopen"));
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    System.out.println("ready " + System.getProperty("java.version"));
    System.out.flush();
    String line;
    while ((line = in.readLine()) != null) {
      String cmd = line.trim();
      if (cmd.equals("quit")) {
        break;
      }
      String reply;
      try {
        reply = bench.handle(cmd);
      } catch (Exception e) {
        reply = ("error " + e).replace('\n', ' ');
      }
      System.out.println(reply);
      System.out.flush();
    }
    // The worker pool's threads are daemons, but say so explicitly.
    System.exit(0);
  }
}
