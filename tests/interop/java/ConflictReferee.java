/*
 * Iceberg Java 1.10.2's commit validations for tests/interop/test_conflict_history_parity.py:
 * one change (a row delta, an overwrite, a rewrite) whose files frazil wrote, committed through
 * Java's API with the validations the test asks for, so that Java decides on the same files
 * and the same concurrent history as frazil does.
 *
 * The change is a JSON object:
 *
 *   kind          "row-delta" | "overwrite" | "rewrite"
 *   start         the snapshot to validate from (validateFromSnapshot), also the snapshot the
 *                 removed files are looked up in
 *   filter        ExpressionParser JSON of the conflict detection filter, or null
 *   add-data, add-deletes     files (below) to add
 *   remove-data               paths of live data files of `start` to remove
 *   remove-deletes            [path, content offset or null] of delete files of `start`
 *   remove-dangling-dvs       also remove the DVs of the removed data files (Spark's
 *                             copy-on-write and compaction do)
 *   referenced                validateDataFilesExist (row deltas)
 *   validate-deleted-files, validate-no-conflicting-data, validate-no-conflicting-deletes
 *   data-sequence-number      a rewrite's (or null)
 *
 * A file is {content 0|1|2, path, format, spec-id, partition: [JSON values], record-count,
 * size, value-counts, null-value-counts, nan-value-counts: {id: n}, lower-bounds,
 * upper-bounds: {id: hex}, equality-ids, referenced-data-file, content-offset, content-size,
 * split-offsets}. The removed files are Java's own DataFile / DeleteFile objects, planned
 * with their column stats at `start` (what Spark hands its commit), so that metrics-based
 * checks see what Java's manifests hold.
 *
 * commit() answers "committed:<snapshot id>", "refused:<message>" for a ValidationException
 * and "not-ancestor:<message>" for BaseRowDelta's precondition that the start is an ancestor
 * (an IllegalArgumentException). Anything else is thrown.
 */
package org.frazil.interop;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileMetadata;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.OverwriteFiles;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.ExpressionParser;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.JsonNode;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.util.DataFileSet;
import org.apache.iceberg.util.DeleteFileSet;
import org.apache.iceberg.util.JsonUtil;

public final class ConflictReferee {
  private ConflictReferee() {}

  public static String commit(Table table, String json) throws Exception {
    JsonNode change = JsonUtil.mapper().readTree(json);
    String kind = change.get("kind").asText();
    long start = change.get("start").asLong();
    Map<String, DataFile> liveData = new HashMap<>();
    Map<String, DeleteFile> liveDeletes = new HashMap<>();
    try (CloseableIterable<FileScanTask> tasks =
        table.newScan().useSnapshot(start).includeColumnStats().planFiles()) {
      for (FileScanTask task : tasks) {
        liveData.put(task.file().location(), task.file());
        for (DeleteFile delete : task.deletes()) {
          liveDeletes.put(deleteKey(delete.location(), delete.contentOffset()), delete);
        }
      }
    }
    List<DataFile> removeData = new ArrayList<>();
    for (JsonNode path : change.get("remove-data")) {
      DataFile file = liveData.get(path.asText());
      if (file == null) {
        throw new IllegalArgumentException("not a live data file of the start: " + path);
      }
      removeData.add(file);
    }
    List<DeleteFile> removeDeletes = new ArrayList<>();
    for (JsonNode key : change.get("remove-deletes")) {
      Long offset = key.get(1).isNull() ? null : key.get(1).asLong();
      DeleteFile file = liveDeletes.get(deleteKey(key.get(0).asText(), offset));
      if (file == null) {
        throw new IllegalArgumentException("not a live delete file of the start: " + key);
      }
      removeDeletes.add(file);
    }
    if (flag(change, "remove-dangling-dvs")) {
      // Spark's copy-on-write and compaction remove the DVs of the files they replace.
      for (DeleteFile delete : liveDeletes.values()) {
        if (delete.format() == FileFormat.PUFFIN
            && delete.referencedDataFile() != null
            && removeData.stream().anyMatch(f -> f.location().equals(delete.referencedDataFile()))
            && !removeDeletes.contains(delete)) {
          removeDeletes.add(delete);
        }
      }
    }
    List<DataFile> addData = new ArrayList<>();
    for (JsonNode file : change.get("add-data")) {
      addData.add(dataFile(table, file));
    }
    List<DeleteFile> addDeletes = new ArrayList<>();
    for (JsonNode file : change.get("add-deletes")) {
      addDeletes.add(deleteFile(table, file));
    }
    Expression filter =
        change.get("filter").isNull()
            ? null
            : ExpressionParser.fromJson(change.get("filter").toString(), table.schema());
    SnapshotUpdate<?> update;
    switch (kind) {
      case "row-delta":
        {
          RowDelta delta = table.newRowDelta().validateFromSnapshot(start);
          addData.forEach(delta::addRows);
          addDeletes.forEach(delta::addDeletes);
          removeData.forEach(delta::removeRows);
          removeDeletes.forEach(delta::removeDeletes);
          if (filter != null) {
            delta.conflictDetectionFilter(filter);
          }
          List<String> referenced = new ArrayList<>();
          for (JsonNode path : change.get("referenced")) {
            referenced.add(path.asText());
          }
          delta.validateDataFilesExist(referenced);
          if (flag(change, "validate-deleted-files")) {
            delta.validateDeletedFiles();
          }
          if (flag(change, "validate-no-conflicting-deletes")) {
            delta.validateNoConflictingDeleteFiles();
          }
          if (flag(change, "validate-no-conflicting-data")) {
            delta.validateNoConflictingDataFiles();
          }
          update = delta;
          break;
        }
      case "overwrite":
        {
          OverwriteFiles overwrite = table.newOverwrite().validateFromSnapshot(start);
          // Spark's CopyOnWriteOperation: the rewritten files and their dangling DVs.
          DataFileSet files = DataFileSet.create();
          files.addAll(removeData);
          DeleteFileSet dvs = DeleteFileSet.create();
          dvs.addAll(removeDeletes);
          overwrite.deleteFiles(files, dvs);
          addData.forEach(overwrite::addFile);
          if (filter != null) {
            overwrite.conflictDetectionFilter(filter);
          }
          if (flag(change, "validate-no-conflicting-data")) {
            overwrite.validateNoConflictingData();
          }
          if (flag(change, "validate-no-conflicting-deletes")) {
            overwrite.validateNoConflictingDeletes();
          }
          update = overwrite;
          break;
        }
      case "rewrite":
        {
          RewriteFiles rewrite = table.newRewrite().validateFromSnapshot(start);
          JsonNode sequence = change.get("data-sequence-number");
          if (sequence != null && !sequence.isNull()) {
            rewrite.dataSequenceNumber(sequence.asLong());
          }
          removeData.forEach(rewrite::deleteFile);
          addData.forEach(rewrite::addFile);
          removeDeletes.forEach(rewrite::deleteFile);
          update = rewrite;
          break;
        }
      default:
        throw new IllegalArgumentException("unknown kind of change: " + kind);
    }
    try {
      update.commit();
    } catch (ValidationException error) {
      return "refused:" + error.getMessage();
    } catch (IllegalArgumentException error) {
      String message = String.valueOf(error.getMessage());
      if (message.contains("is not an ancestor of")) {
        return "not-ancestor:" + message;
      }
      throw error;
    }
    return "committed:" + table.currentSnapshot().snapshotId();
  }

  /** Sets the main branch back to {@code snapshotId} (an ancestor of its head). */
  public static void rollbackTo(Table table, long snapshotId) {
    table.manageSnapshots().rollbackTo(snapshotId).commit();
  }

  private static boolean flag(JsonNode change, String name) {
    JsonNode value = change.get(name);
    return value != null && value.asBoolean(false);
  }

  private static String deleteKey(String path, Long offset) {
    return path + "@" + (offset == null ? "" : offset.toString());
  }

  private static DataFile dataFile(Table table, JsonNode file) {
    PartitionSpec spec = table.specs().get(file.get("spec-id").asInt());
    DataFiles.Builder builder =
        DataFiles.builder(spec)
            .withPath(file.get("path").asText())
            .withFormat(FileFormat.fromString(file.get("format").asText()))
            .withFileSizeInBytes(file.get("size").asLong())
            .withRecordCount(file.get("record-count").asLong())
            .withMetrics(metrics(file));
    if (spec.isPartitioned()) {
      builder.withPartition(partition(spec, file.get("partition")));
    }
    List<Long> splits = longs(file.get("split-offsets"));
    if (splits != null) {
      builder.withSplitOffsets(splits);
    }
    return builder.build();
  }

  private static DeleteFile deleteFile(Table table, JsonNode file) {
    PartitionSpec spec = table.specs().get(file.get("spec-id").asInt());
    FileMetadata.Builder builder = FileMetadata.deleteFileBuilder(spec);
    if (file.get("content").asInt() == 2) {
      JsonNode ids = file.get("equality-ids");
      int[] fieldIds = new int[ids.size()];
      for (int i = 0; i < fieldIds.length; i += 1) {
        fieldIds[i] = ids.get(i).asInt();
      }
      builder.ofEqualityDeletes(fieldIds);
    } else {
      builder.ofPositionDeletes();
    }
    builder
        .withPath(file.get("path").asText())
        .withFormat(FileFormat.fromString(file.get("format").asText()))
        .withFileSizeInBytes(file.get("size").asLong())
        .withRecordCount(file.get("record-count").asLong())
        .withMetrics(metrics(file));
    if (spec.isPartitioned()) {
      builder.withPartition(partition(spec, file.get("partition")));
    }
    JsonNode referenced = file.get("referenced-data-file");
    if (referenced != null && !referenced.isNull()) {
      builder.withReferencedDataFile(referenced.asText());
    }
    JsonNode offset = file.get("content-offset");
    if (offset != null && !offset.isNull()) {
      builder.withContentOffset(offset.asLong());
      builder.withContentSizeInBytes(file.get("content-size").asLong());
    }
    List<Long> splits = longs(file.get("split-offsets"));
    if (splits != null) {
      builder.withSplitOffsets(splits);
    }
    return builder.build();
  }

  private static Metrics metrics(JsonNode file) {
    return new Metrics(
        file.get("record-count").asLong(),
        counts(file.get("column-sizes")),
        counts(file.get("value-counts")),
        counts(file.get("null-value-counts")),
        counts(file.get("nan-value-counts")),
        bounds(file.get("lower-bounds")),
        bounds(file.get("upper-bounds")));
  }

  private static Map<Integer, Long> counts(JsonNode node) {
    if (node == null || node.isNull()) {
      return null;
    }
    Map<Integer, Long> out = new HashMap<>();
    Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> field = fields.next();
      out.put(Integer.parseInt(field.getKey()), field.getValue().asLong());
    }
    return out;
  }

  private static Map<Integer, ByteBuffer> bounds(JsonNode node) {
    if (node == null || node.isNull()) {
      return null;
    }
    Map<Integer, ByteBuffer> out = new HashMap<>();
    Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> field = fields.next();
      out.put(Integer.parseInt(field.getKey()), ByteBuffer.wrap(unhex(field.getValue().asText())));
    }
    return out;
  }

  private static List<Long> longs(JsonNode node) {
    if (node == null || node.isNull()) {
      return null;
    }
    List<Long> out = new ArrayList<>();
    for (JsonNode value : node) {
      out.add(value.asLong());
    }
    return out;
  }

  private static byte[] unhex(String text) {
    byte[] out = new byte[text.length() / 2];
    for (int i = 0; i < out.length; i += 1) {
      out[i] = (byte) Integer.parseInt(text.substring(2 * i, 2 * i + 2), 16);
    }
    return out;
  }

  /** A partition tuple from JSON values: strings, ints, longs (all these tests need). */
  private static StructLike partition(PartitionSpec spec, JsonNode values) {
    List<PartitionField> fields = spec.fields();
    Object[] tuple = new Object[fields.size()];
    for (int i = 0; i < tuple.length; i += 1) {
      JsonNode value = values.get(i);
      Type type = fields.get(i).transform().getResultType(spec.schema().findType(fields.get(i).sourceId()));
      if (value == null || value.isNull()) {
        tuple[i] = null;
      } else if (type.typeId() == Type.TypeID.STRING) {
        tuple[i] = value.asText();
      } else if (type.typeId() == Type.TypeID.INTEGER || type.typeId() == Type.TypeID.DATE) {
        tuple[i] = value.asInt();
      } else if (type.typeId() == Type.TypeID.LONG) {
        tuple[i] = value.asLong();
      } else {
        throw new IllegalArgumentException("unsupported partition type in this test: " + type);
      }
    }
    return new Tuple(tuple);
  }

  private static final class Tuple implements StructLike {
    private final Object[] values;

    private Tuple(Object[] values) {
      this.values = values;
    }

    @Override
    public int size() {
      return values.length;
    }

    @Override
    public <T> T get(int pos, Class<T> javaClass) {
      return javaClass.cast(values[pos]);
    }

    @Override
    public <T> void set(int pos, T value) {
      values[pos] = value;
    }
  }
}
