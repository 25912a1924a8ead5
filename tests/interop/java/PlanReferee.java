/*
 * Scan planning on the Java side of frazil's interop tests (tests/interop/test_scan_parity.py):
 * Iceberg Java's TableScan.planFiles() for a whole battery of filters in one py4j call, and
 * writers for what Spark SQL cannot write (time, uuid and fixed columns; equality deletes).
 *
 * Text crosses the bridge, never Java objects in loops:
 *
 *   planAll     one line per filter (filters: newline-separated ExpressionParser JSON);
 *               a line is the planned tasks separated by RS (U+001E), a task is its data
 *               file location then its delete files' locations separated by US (U+001F),
 *               deletes sorted, a deletion vector written "location#offset#size". A filter
 *               Java rejects gives "!" + exception class + ": " + message.
 *   fileStats   one line per data file of the unfiltered plan: location, record count, and
 *               the value / null / NaN counts and lower / upper bounds (hex) of one field,
 *               tab-separated, "~" for absent.
 *   deleteColumnSizes
 *               one line per task of the selected snapshot planned with column stats: the
 *               data file location, then per delete file (sorted) US, its location, US, and
 *               its column sizes as "id=size" joined by commas ("~" when absent).
 *   planTasks   TableScanUtil.planTasks(splitFiles(tasks)) over the current snapshot's
 *               tasks in the caller's order: the first line the number of split pieces,
 *               then one line per combined task, its pieces (location US start US length)
 *               separated by RS.
 *   rows        one JSON object a row keyed by field id (SingleValueParser's struct form,
 *               Appendix D JSON values), rows separated by RS, batches by newlines.
 *
 * A snapshot selection is "current", "snapshot:<id>", "ref:<name>" or "asof:<ms>".
 */
package org.frazil.interop;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.stream.IntStream;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.CombinedScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SingleValueParser;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.ExpressionParser;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.relocated.com.google.common.util.concurrent.MoreExecutors;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.DateTimeUtil;
import org.apache.iceberg.util.StructLikeMap;
import org.apache.iceberg.util.TableScanUtil;

public final class PlanReferee {
  private static final String RS = "\u001e";
  private static final String US = "\u001f";
  private static final String NULL = "~";
  private static final ExecutorService DIRECT = MoreExecutors.newDirectExecutorService();

  private PlanReferee() {}

  /**
   * The table a metadata JSON file describes, read-only (StaticTableOperations). The FileIO
   * comes from the caller: Hadoop's classes are on Spark's class path, not in the Iceberg
   * runtime jar these sources compile against.
   */
  public static Table load(String metadataLocation, FileIO io) {
    return new BaseTable(new StaticTableOperations(metadataLocation, io), metadataLocation);
  }

  private static TableScan select(Table table, String selection) {
    // Planned on the calling thread (planAll runs filters in parallel instead): the same
    // planning as on the worker pool, without hand-offs that dominate for small tables.
    TableScan scan = table.newScan().planWith(DIRECT);
    if (selection.equals("current")) {
      return scan;
    } else if (selection.startsWith("snapshot:")) {
      return scan.useSnapshot(Long.parseLong(selection.substring(9)));
    } else if (selection.startsWith("ref:")) {
      return scan.useRef(selection.substring(4));
    } else if (selection.startsWith("asof:")) {
      return scan.asOfTime(Long.parseLong(selection.substring(5)));
    }
    throw new IllegalArgumentException("unknown snapshot selection: " + selection);
  }

  /**
   * planFiles() of each filter over the selected snapshot; see the header for the format.
   * Filters are planned in parallel (each scan is independent; the table is only read).
   */
  public static String planAll(Table table, String selection, String filters) {
    String[] lines = filters.isEmpty() ? new String[0] : filters.split("\n", -1);
    String[] results = new String[lines.length];
    IntStream.range(0, lines.length)
        .parallel()
        .forEach(i -> results[i] = planOne(table, selection, lines[i]));
    return String.join("\n", results);
  }

  private static String planOne(Table table, String selection, String filterJson) {
    try {
      TableScan scan = select(table, selection);
      Expression filter = ExpressionParser.fromJson(filterJson, scan.schema());
      return plan(scan.filter(filter));
    } catch (Exception e) {
      String message = String.valueOf(e.getMessage()).replace('\n', ' ');
      return "!" + e.getClass().getName() + ": " + message;
    }
  }

  private static String plan(TableScan scan) throws Exception {
    List<String> tasks = new ArrayList<>();
    try (CloseableIterable<FileScanTask> planned = scan.planFiles()) {
      for (FileScanTask task : planned) {
        List<String> deletes = new ArrayList<>();
        for (DeleteFile delete : task.deletes()) {
          deletes.add(describe(delete));
        }
        Collections.sort(deletes);
        StringBuilder text = new StringBuilder(task.file().location());
        for (String delete : deletes) {
          text.append(US).append(delete);
        }
        tasks.add(text.toString());
      }
    }
    Collections.sort(tasks);
    return String.join(RS, tasks);
  }

  private static String describe(DeleteFile delete) {
    if (delete.format() == FileFormat.PUFFIN) {
      return delete.location() + "#" + delete.contentOffset() + "#" + delete.contentSizeInBytes();
    }
    return delete.location();
  }

  /** Metrics of one field for every data file of the unfiltered plan (header: fileStats). */
  public static String fileStats(Table table, String selection, int fieldId) throws Exception {
    List<String> lines = new ArrayList<>();
    try (CloseableIterable<FileScanTask> planned =
        select(table, selection).includeColumnStats().planFiles()) {
      for (FileScanTask task : planned) {
        DataFile file = task.file();
        lines.add(
            String.join(
                "\t",
                file.location(),
                String.valueOf(file.recordCount()),
                count(file.valueCounts(), fieldId),
                count(file.nullValueCounts(), fieldId),
                count(file.nanValueCounts(), fieldId),
                bound(file.lowerBounds(), fieldId),
                bound(file.upperBounds(), fieldId)));
      }
    }
    Collections.sort(lines);
    return String.join("\n", lines);
  }

  /** The delete files' column sizes of every task (header: deleteColumnSizes). */
  public static String deleteColumnSizes(Table table, String selection) throws Exception {
    List<String> lines = new ArrayList<>();
    try (CloseableIterable<FileScanTask> planned =
        select(table, selection).includeColumnStats().planFiles()) {
      for (FileScanTask task : planned) {
        List<String> deletes = new ArrayList<>();
        for (DeleteFile delete : task.deletes()) {
          Map<Integer, Long> sizes = delete.columnSizes();
          String text = NULL;
          if (sizes != null) {
            List<String> pairs = new ArrayList<>();
            for (Map.Entry<Integer, Long> entry : sizes.entrySet()) {
              pairs.add(entry.getKey() + "=" + entry.getValue());
            }
            text = String.join(",", pairs);
          }
          deletes.add(delete.location() + US + text);
        }
        Collections.sort(deletes);
        StringBuilder line = new StringBuilder(task.file().location());
        for (String delete : deletes) {
          line.append(US).append(delete);
        }
        lines.add(line.toString());
      }
    }
    Collections.sort(lines);
    return String.join("\n", lines);
  }

  /** Java's split and bin packing of the current snapshot's tasks (header: planTasks). */
  public static String planTasks(
      Table table, String orderedLocations, long target, int lookback, long openFileCost)
      throws Exception {
    Map<String, FileScanTask> byLocation = new java.util.HashMap<>();
    try (CloseableIterable<FileScanTask> planned = table.newScan().planWith(DIRECT).planFiles()) {
      for (FileScanTask task : planned) {
        byLocation.put(task.file().location(), task);
      }
    }
    List<FileScanTask> tasks = new ArrayList<>();
    for (String location : orderedLocations.split("\n", -1)) {
      FileScanTask task = byLocation.get(location);
      if (task == null) {
        throw new IllegalArgumentException("Java planned no task for " + location);
      }
      tasks.add(task);
    }
    List<FileScanTask> pieces = new ArrayList<>();
    try (CloseableIterable<FileScanTask> split =
        TableScanUtil.splitFiles(CloseableIterable.withNoopClose(tasks), target)) {
      split.forEach(pieces::add);
    }
    List<String> lines = new ArrayList<>();
    lines.add(String.valueOf(pieces.size()));
    try (CloseableIterable<CombinedScanTask> groups =
        TableScanUtil.planTasks(
            CloseableIterable.withNoopClose(pieces), target, lookback, openFileCost)) {
      for (CombinedScanTask group : groups) {
        List<String> parts = new ArrayList<>();
        for (FileScanTask piece : group.files()) {
          parts.add(piece.file().location() + US + piece.start() + US + piece.length());
        }
        lines.add(String.join(RS, parts));
      }
    }
    return String.join("\n", lines);
  }

  private static String count(Map<Integer, Long> counts, int fieldId) {
    Long value = counts == null ? null : counts.get(fieldId);
    return value == null ? NULL : value.toString();
  }

  private static String bound(Map<Integer, ByteBuffer> bounds, int fieldId) {
    ByteBuffer value = bounds == null ? null : bounds.get(fieldId);
    if (value == null) {
      return NULL;
    }
    ByteBuffer copy = value.duplicate();
    StringBuilder hex = new StringBuilder();
    while (copy.hasRemaining()) {
      hex.append(String.format("%02x", copy.get() & 0xff));
    }
    return hex.toString();
  }

  /**
   * Writes the rows of each line of {@code files} with Iceberg's generic Parquet writer (so
   * every type, time and uuid included, gets Java's own metrics), one data file per partition
   * the line's rows fall in, and appends all the files in one commit (to {@code branch}, or
   * main when empty). Returns the new snapshot id.
   */
  public static long appendFiles(Table table, String branch, String files) throws Exception {
    Schema schema = table.schema();
    PartitionSpec spec = table.spec();
    GenericAppenderFactory factory =
        new GenericAppenderFactory(table, schema, spec, null, null, null, null);
    AppendFiles append = table.newAppend();
    if (!branch.isEmpty()) {
      append = append.toBranch(branch);
    }
    for (String line : files.split("\n")) {
      StructLikeMap<List<Record>> byPartition = StructLikeMap.create(spec.partitionType());
      for (Record row : parseRows(schema, line)) {
        StructLike partition = partitionOf(spec, schema, row);
        byPartition.computeIfAbsent(partition, key -> new ArrayList<>()).add(row);
      }
      for (Map.Entry<StructLike, List<Record>> group : byPartition.entrySet()) {
        StructLike partition = spec.isUnpartitioned() ? null : group.getKey();
        String name = UUID.randomUUID() + ".parquet";
        String location =
            spec.isUnpartitioned()
                ? table.locationProvider().newDataLocation(name)
                : table.locationProvider().newDataLocation(spec, partition, name);
        DataWriter<Record> writer =
            factory.newDataWriter(
                EncryptedFiles.plainAsEncryptedOutput(table.io().newOutputFile(location)),
                FileFormat.PARQUET,
                partition);
        try {
          for (Record row : group.getValue()) {
            writer.write((Record) toGeneric(schema.asStruct(), row));
          }
        } finally {
          writer.close();
        }
        append.appendFile(writer.toDataFile());
      }
    }
    append.commit();
    table.refresh();
    return branch.isEmpty()
        ? table.currentSnapshot().snapshotId()
        : table.refs().get(branch).snapshotId();
  }

  /**
   * Writes one equality delete file on {@code equalityIds} (comma-separated field ids) under
   * the table's spec {@code specId} and commits it in a row delta. {@code partitionRow} is a
   * full row whose partition the file belongs to (ignored for an unpartitioned spec); the
   * delete rows hold the equality columns only. Returns the new snapshot id.
   */
  public static long addEqualityDeletes(
      Table table, int specId, String equalityIds, String partitionRow, String rows)
      throws Exception {
    Schema schema = table.schema();
    PartitionSpec spec = table.specs().get(specId);
    Set<Integer> ids = new HashSet<>();
    String[] parts = equalityIds.split(",");
    int[] idArray = new int[parts.length];
    for (int i = 0; i < parts.length; i += 1) {
      idArray[i] = Integer.parseInt(parts[i].trim());
      ids.add(idArray[i]);
    }
    Schema deleteSchema = TypeUtil.select(schema, ids);
    GenericAppenderFactory factory =
        new GenericAppenderFactory(table, schema, spec, null, idArray, deleteSchema, null);
    StructLike partition =
        spec.isUnpartitioned()
            ? null
            : partitionOf(spec, schema, parseRows(schema, partitionRow).get(0));
    String location =
        spec.isUnpartitioned()
            ? table.locationProvider().newDataLocation("eq-" + UUID.randomUUID() + ".parquet")
            : table
                .locationProvider()
                .newDataLocation(spec, partition, "eq-" + UUID.randomUUID() + ".parquet");
    EqualityDeleteWriter<Record> writer =
        factory.newEqDeleteWriter(
            EncryptedFiles.plainAsEncryptedOutput(table.io().newOutputFile(location)),
            FileFormat.PARQUET,
            partition);
    try {
      for (Record row : parseRows(deleteSchema, rows)) {
        writer.write((Record) toGeneric(deleteSchema.asStruct(), row));
      }
    } finally {
      writer.close();
    }
    table.newRowDelta().addDeletes(writer.toDeleteFile()).commit();
    table.refresh();
    return table.currentSnapshot().snapshotId();
  }

  private static List<Record> parseRows(Schema schema, String text) {
    List<Record> rows = new ArrayList<>();
    for (String row : text.split(RS)) {
      rows.add((Record) SingleValueParser.fromJson(schema.asStruct(), row));
    }
    return rows;
  }

  /** The partition of a row (internal values, as PartitionKey takes them). */
  private static StructLike partitionOf(PartitionSpec spec, Schema schema, Record row) {
    PartitionKey key = new PartitionKey(spec, schema);
    key.partition(row);
    return key.copy();
  }

  /** Internal values (days, micros, ByteBuffer) to the generic writer's (LocalDate, ...). */
  private static Object toGeneric(Type type, Object value) {
    if (value == null) {
      return null;
    }
    switch (type.typeId()) {
      case DATE:
        return DateTimeUtil.dateFromDays((Integer) value);
      case TIME:
        return DateTimeUtil.timeFromMicros((Long) value);
      case TIMESTAMP:
        return ((Types.TimestampType) type).shouldAdjustToUTC()
            ? DateTimeUtil.timestamptzFromMicros((Long) value)
            : DateTimeUtil.timestampFromMicros((Long) value);
      case TIMESTAMP_NANO:
        return ((Types.TimestampNanoType) type).shouldAdjustToUTC()
            ? DateTimeUtil.timestamptzFromNanos((Long) value)
            : DateTimeUtil.timestampFromNanos((Long) value);
      case FIXED:
        ByteBuffer buffer = ((ByteBuffer) value).duplicate();
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return bytes;
      case STRING:
        return value.toString();
      case STRUCT:
        Types.StructType struct = type.asStructType();
        StructLike source = (StructLike) value;
        GenericRecord record = GenericRecord.create(struct);
        List<Types.NestedField> fields = struct.fields();
        for (int pos = 0; pos < fields.size(); pos += 1) {
          Type fieldType = fields.get(pos).type();
          record.set(pos, toGeneric(fieldType, source.get(pos, Object.class)));
        }
        return record;
      default:
        return value;
    }
  }
}
