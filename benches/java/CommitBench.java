import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.ExpireSnapshots;
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
 *   <li>"expire TABLE OLDER_THAN_MS CLEANUP": a fresh catalog and table load (untimed), then
 *       expireSnapshots().expireOlderThan(t).commit() (timed), deleting the files through the
 *       table's FileIO on core's default delete executor; reply "wall-ns". CLEANUP picks the
 *       file cleanup: "reachable" (ReachableFileCleanup, what Spark's expire action and
 *       frazil do), "incremental" (IncrementalFileCleanup) or "auto" (core's choice:
 *       incremental for a history that is all main's ancestry). RemoveSnapshots has no public
 *       setter in 1.10 (withIncrementalCleanup is package-private), so it is set by
 *       reflection.
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
      try {
        java.nio.file.Files.deleteIfExists(java.nio.file.Paths.get(path));
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
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

  String expire(String table, long olderThan, String cleanup) throws Exception {
    try (JdbcCatalog catalog = catalog()) {
      Table t = catalog.loadTable(TableIdentifier.parse(table));
      long start = System.nanoTime();
      ExpireSnapshots expire = t.expireSnapshots().expireOlderThan(olderThan);
      if (!cleanup.equals("auto")) {
        Method incremental =
            Class.forName("org.apache.iceberg.RemoveSnapshots")
                .getDeclaredMethod("withIncrementalCleanup", boolean.class);
        incremental.setAccessible(true);
        incremental.invoke(expire, cleanup.equals("incremental"));
      }
      expire.commit();
      return Long.toString(System.nanoTime() - start);
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
            System.out.println(bench.expire(parts[1], Long.parseLong(parts[2]), parts[3]));
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
