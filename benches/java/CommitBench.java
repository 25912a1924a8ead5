import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Files;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.jdbc.JdbcCatalog;

/**
 * Times Apache Iceberg Java's commits inside the JVM (System.nanoTime), driven by
 * benches/bench_commit.py over stdin so that its rounds interleave with the Python contenders.
 * Tables come from a JdbcCatalog on the same SQLite file as frazil's SqlCatalog.
 *
 * <p>Usage: java -cp runtime.jar:slf4j-api.jar:sqlite-jdbc.jar:classes CommitBench catalog.db
 * warehouse catalog-name. Commands, one a line:
 *
 * <ul>
 *   <li>"append TABLE PATH SIZE RECORDS": a fresh catalog and table load (untimed), then
 *       newFastAppend().appendFile(file).commit() (timed); reply "wall-ns".
 *   <li>"expire TABLE OLDER_THAN_MS": a fresh catalog and table load (untimed), then
 *       expireSnapshots().expireOlderThan(t).deleteWith(counter).commit() (timed), the counter
 *       recording paths instead of deleting; reply "wall-ns count sha256-of-sorted-paths".
 *   <li>"quit".
 * </ul>
 *
 * A fresh catalog per command: on SQLite a JdbcCatalog's pooled connection can keep an open read
 * snapshot (see tests/interop/test_catalog_parity.py) and miss the other contenders' commits.
 */
public class CommitBench {
  /** Local files only: the runtime jar ships no Hadoop, so HadoopFileIO cannot be used. */
  public static final class LocalFileIO implements FileIO {
    public LocalFileIO() {}

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
      new java.io.File(path).delete();
    }
  }

  private final String uri;
  private final String warehouse;
  private final String name;

  CommitBench(String database, String warehouse, String name) {
    this.uri = "jdbc:sqlite:" + database;
    this.warehouse = warehouse;
    this.name = name;
  }

  JdbcCatalog catalog() {
    Map<String, String> props = new HashMap<>();
    props.put("uri", uri);
    props.put("warehouse", warehouse);
    props.put("jdbc.schema-version", "V1");
    props.put("io-impl", LocalFileIO.class.getName());
    JdbcCatalog catalog = new JdbcCatalog();
    catalog.initialize(name, props);
    return catalog;
  }

  String append(String table, String path, long size, long records) throws IOException {
    try (JdbcCatalog catalog = catalog()) {
      Table t = catalog.loadTable(TableIdentifier.parse(table));
      long start = System.nanoTime();
      DataFile file =
          DataFiles.builder(t.spec())
              .withPath(path)
              .withFormat(FileFormat.PARQUET)
              .withFileSizeInBytes(size)
              .withRecordCount(records)
              .build();
      t.newFastAppend().appendFile(file).commit();
      return Long.toString(System.nanoTime() - start);
    }
  }

  String expire(String table, long olderThan) throws IOException, NoSuchAlgorithmException {
    try (JdbcCatalog catalog = catalog()) {
      Table t = catalog.loadTable(TableIdentifier.parse(table));
      List<String> deleted = Collections.synchronizedList(new ArrayList<>());
      long start = System.nanoTime();
      t.expireSnapshots().expireOlderThan(olderThan).deleteWith(deleted::add).commit();
      long wall = System.nanoTime() - start;
      List<String> sorted = new ArrayList<>(deleted);
      Collections.sort(sorted);
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      for (String path : sorted) {
        sha.update(path.getBytes(StandardCharsets.UTF_8));
        sha.update((byte) '\n');
      }
      StringBuilder hex = new StringBuilder();
      for (byte b : sha.digest()) {
        hex.append(String.format("%02x", b));
      }
      return wall + " " + sorted.size() + " " + hex;
    }
  }

  public static void main(String[] args) throws Exception {
    CommitBench bench = new CommitBench(args[0], args[1], args[2]);
    System.out.println("ready " + org.apache.iceberg.IcebergBuild.fullVersion());
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      String[] parts = line.trim().split(" ");
      try {
        switch (parts[0]) {
          case "append":
            System.out.println(
                bench.append(
                    parts[1], parts[2], Long.parseLong(parts[3]), Long.parseLong(parts[4])));
            break;
          case "expire":
            System.out.println(bench.expire(parts[1], Long.parseLong(parts[2])));
            break;
          case "quit":
            return;
          default:
            System.out.println("error unknown command " + parts[0]);
        }
      } catch (Exception e) {
        System.out.println("error " + e.toString().replace('\n', ' '));
      }
      System.out.flush();
    }
  }
}
