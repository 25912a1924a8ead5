import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.List;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Files;
import org.apache.iceberg.GenericManifestFile;
import org.apache.iceberg.GenericPartitionFieldSummary;
import org.apache.iceberg.InternalData;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.relocated.com.google.common.collect.Lists;

/**
 * Times Apache Iceberg Java's manifest reader (ManifestFiles.read) inside the JVM, driven by
 * benches/bench_manifest.py over stdin so that its rounds interleave with the Python readers.
 *
 * <p>Usage: java -cp runtime.jar:slf4j-api.jar:classes ManifestBench manifest-list.avro. Commands,
 * one a line: "all" (every field) or "planning" (file_path, partition, record_count); each reply
 * is "entries sum-of-record_count thread-cpu-ns process-cpu-ns wall-ns". "quit" ends.
 */
public class ManifestBench {
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

  static final List<String> PLANNING = Arrays.asList("file_path", "partition", "record_count");

  static long[] readAll(List<ManifestFile> manifests, FileIO io, boolean planning)
      throws IOException {
    long entries = 0;
    long records = 0;
    long chars = 0;
    for (ManifestFile manifest : manifests) {
      ManifestReader<DataFile> reader = ManifestFiles.read(manifest, io);
      if (planning) {
        reader = reader.select(PLANNING);
      }
      try (ManifestReader<DataFile> r = reader) {
        for (DataFile file : r) {
          // Touch fields (and use them below) so the JIT cannot drop the decoding.
          records += file.recordCount();
          chars += file.location().length();
          entries += 1;
        }
      }
    }
    return new long[] {entries, records, chars};
  }

  public static void main(String[] args) throws IOException {
    FileIO io = new LocalFileIO();
    List<ManifestFile> manifests;
    // The public form of ManifestLists.read (package-private): the same Avro read builder.
    try (CloseableIterable<ManifestFile> files =
        InternalData.read(FileFormat.AVRO, io.newInputFile(args[0]))
            .setRootType(GenericManifestFile.class)
            .setCustomType(
                ManifestFile.PARTITION_SUMMARIES_ELEMENT_ID, GenericPartitionFieldSummary.class)
            .project(ManifestFile.schema())
            .build()) {
      manifests = Lists.newArrayList(files);
    }
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    // Process CPU time also counts the garbage collector's and the JIT's threads.
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    System.out.println("ready " + manifests.size());
    System.out.flush();
    String line;
    while ((line = in.readLine()) != null) {
      String cmd = line.trim();
      if (cmd.equals("quit")) {
        break;
      }
      long cpu = mx.getCurrentThreadCpuTime();
      long proc = os.getProcessCpuTime();
      long wall = System.nanoTime();
      long[] read = readAll(manifests, io, cmd.equals("planning"));
      wall = System.nanoTime() - wall;
      cpu = mx.getCurrentThreadCpuTime() - cpu;
      proc = os.getProcessCpuTime() - proc;
      if (read[2] == 0) {
        throw new IllegalStateException("no file paths were decoded");
      }
      System.out.println(read[0] + " " + read[1] + " " + cpu + " " + proc + " " + wall);
      System.out.flush();
    }
  }
}
