/*
 * Iceberg Java 1.10.2's generic reader (IcebergGenerics: data files, position deletes,
 * deletion vectors and equality deletes applied) for the read parity tests, for tables Spark
 * 3.5 cannot read (time, timestamp_ns). Rows come back as JSON lines whose values are Iceberg's
 * internal representation, so no value goes through a Java or Python date-time type:
 *
 * - a row (a struct) is a JSON array of its fields, a list a JSON array, a map a JSON array of
 *   [key, value] pairs, null is null;
 * - boolean, int, long as JSON; date as days, time and timestamp as micros, timestamp_ns as
 *   nanos from the epoch (JSON numbers);
 * - float and double as the text of the value widened to double ("NaN", "-0.0", "Infinity");
 * - decimal as its plain text, string as a string, uuid as its text, binary and fixed as hex.
 */
package org.frazil.interop;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.DateTimeUtil;
import org.apache.iceberg.util.JsonUtil;

public final class ReadReferee {
  private ReadReferee() {}

  /**
   * Every row of the table at {@code selection} ("current", "snapshot:<id>", "ref:<name>" or
   * "asof:<ms>", as PlanReferee takes them),
   * one JSON line each (see the header), in the order Java reads them.
   */
  public static String readRows(Table table, String selection) throws Exception {
    IcebergGenerics.ScanBuilder scan = IcebergGenerics.read(table);
    if (selection.startsWith("snapshot:")) {
      scan = scan.useSnapshot(Long.parseLong(selection.substring(9)));
    } else if (selection.startsWith("ref:")) {
      scan = scan.useSnapshot(table.refs().get(selection.substring(4)).snapshotId());
    } else if (selection.startsWith("asof:")) {
      scan = scan.asOfTime(Long.parseLong(selection.substring(5)));
    } else if (!selection.equals("current")) {
      throw new IllegalArgumentException("unknown snapshot selection: " + selection);
    }
    StringBuilder out = new StringBuilder();
    try (CloseableIterable<Record> rows = scan.build()) {
      for (Record row : rows) {
        out.append(JsonUtil.mapper().writeValueAsString(plain(row.struct(), row))).append('\n');
      }
    }
    return out.toString();
  }

  private static Object plain(Type type, Object value) {
    if (value == null) {
      return null;
    }
    switch (type.typeId()) {
      case FLOAT:
        return Double.toString((double) (Float) value);
      case DOUBLE:
        return Double.toString((Double) value);
      case DECIMAL:
        return ((BigDecimal) value).toPlainString();
      case DATE:
        return (long) DateTimeUtil.daysFromDate((LocalDate) value);
      case TIME:
        return DateTimeUtil.microsFromTime((LocalTime) value);
      case TIMESTAMP:
        return ((Types.TimestampType) type).shouldAdjustToUTC()
            ? DateTimeUtil.microsFromTimestamptz((OffsetDateTime) value)
            : DateTimeUtil.microsFromTimestamp((LocalDateTime) value);
      case TIMESTAMP_NANO:
        return ((Types.TimestampNanoType) type).shouldAdjustToUTC()
            ? DateTimeUtil.nanosFromTimestamptz((OffsetDateTime) value)
            : DateTimeUtil.nanosFromTimestamp((LocalDateTime) value);
      case UUID:
      case STRING:
        return value.toString();
      case FIXED:
      case BINARY:
        return hex(value instanceof ByteBuffer ? (ByteBuffer) value : ByteBuffer.wrap((byte[]) value));
      case STRUCT:
        List<Types.NestedField> fields = type.asStructType().fields();
        Record record = (Record) value;
        List<Object> struct = new ArrayList<>();
        for (int pos = 0; pos < fields.size(); pos += 1) {
          struct.add(plain(fields.get(pos).type(), record.get(pos)));
        }
        return struct;
      case LIST:
        List<Object> list = new ArrayList<>();
        for (Object element : (List<?>) value) {
          list.add(plain(type.asListType().elementType(), element));
        }
        return list;
      case MAP:
        List<Object> pairs = new ArrayList<>();
        for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
          List<Object> pair = new ArrayList<>();
          pair.add(plain(type.asMapType().keyType(), entry.getKey()));
          pair.add(plain(type.asMapType().valueType(), entry.getValue()));
          pairs.add(pair);
        }
        return pairs;
      default:
        return value;
    }
  }

  private static String hex(ByteBuffer buffer) {
    ByteBuffer copy = buffer.duplicate();
    StringBuilder text = new StringBuilder();
    while (copy.hasRemaining()) {
      text.append(String.format("%02x", copy.get() & 0xff));
    }
    return text.toString();
  }
}
