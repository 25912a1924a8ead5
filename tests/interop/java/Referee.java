/*
 * The Java side of frazil's interop tests: runs Apache Iceberg Java's transforms,
 * single-value encoders and hash over many values in one py4j call.
 *
 * Values cross the py4j bridge as one string of newline-separated tokens, in
 * Iceberg's internal representation (see tests/interop/codec.py, which is the
 * Python half of this format):
 *
 *   boolean           true | false
 *   int, date         decimal int (days from 1970-01-01 for date)
 *   long, time,       decimal long (microseconds)
 *   timestamp(tz)
 *   timestamp(tz)_ns  decimal long (nanoseconds, v3)
 *   float, double     raw IEEE 754 bits as a decimal int / long (keeps NaN payloads, -0.0)
 *   decimal(P,S)      unscaled value as a decimal integer (the scale is the type's)
 *   string            UTF-8 bytes as lowercase hex (no escaping worries on the bridge)
 *   uuid              canonical lowercase form
 *   fixed, binary     lowercase hex
 *   null              ~
 *
 * A value Java rejects comes back as "!" followed by the exception's class name, so
 * that one bad value does not hide the answers for the others.
 */
package org.frazil.interop;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import org.apache.iceberg.IcebergBuild;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.SingleValueParser;
import org.apache.iceberg.transforms.Transform;
import org.apache.iceberg.transforms.Transforms;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.BucketUtil;
import org.apache.iceberg.util.DateTimeUtil;
import org.apache.iceberg.util.SerializableFunction;

public final class Referee {
  private static final String NULL = "~";

  private Referee() {}

  /** The Java runtime's Iceberg version, to make sure the right jar is loaded. */
  public static String icebergVersion() {
    return IcebergBuild.version();
  }

  /** Applies the transform ("bucket[16]", "truncate[4]", "day", ...) to each value. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public static String transform(String transformString, String typeString, String tokens) {
    Type type = Types.fromPrimitiveString(typeString);
    Transform transform = Transforms.fromString(transformString);
    SerializableFunction<Object, Object> fn = transform.bind(type);
    Type resultType = transform.getResultType(type);
    return map(tokens, token -> encode(resultType, fn.apply(decode(type, token))));
  }

  /** Conversions.toByteBuffer, as lowercase hex. */
  public static String toBytes(String typeString, String tokens) {
    Type type = Types.fromPrimitiveString(typeString);
    return map(tokens, token -> hex(Conversions.toByteBuffer(type, decode(type, token))));
  }

  /** Conversions.fromByteBuffer of hex input, as tokens. */
  public static String fromBytes(String typeString, String hexes) {
    Type type = Types.fromPrimitiveString(typeString);
    return map(
        hexes,
        hex -> encode(type, Conversions.fromByteBuffer(type, ByteBuffer.wrap(unhex(hex)))));
  }

  /** The 32-bit bucket hash (Appendix B) of each value, sign bit kept. */
  public static String hash(String typeString, String tokens) {
    Type type = Types.fromPrimitiveString(typeString);
    return map(tokens, token -> Integer.toString(hashOf(type, decode(type, token))));
  }

  /** SingleValueParser.toJson of each primitive value: one JSON text per line. */
  public static String toJson(String typeString, String tokens) {
    Type type = Types.fromPrimitiveString(typeString);
    return map(tokens, token -> SingleValueParser.toJson(type, decode(type, token)));
  }

  /** SingleValueParser.fromJson of each JSON text, as tokens. */
  public static String fromJson(String typeString, String jsonTexts) {
    Type type = Types.fromPrimitiveString(typeString);
    return map(jsonTexts, json -> encode(type, SingleValueParser.fromJson(type, json)));
  }

  /**
   * For a nested type: parses each JSON text with SingleValueParser.fromJson and writes it
   * back with toJson. The type is field 1 of the given schema JSON.
   */
  public static String jsonRoundTrip(String schemaJson, int fieldId, String jsonTexts) {
    Schema schema = SchemaParser.fromJson(schemaJson);
    Type type = schema.findType(fieldId);
    if (type == null) {
      throw new IllegalArgumentException("no field " + fieldId + " in " + schemaJson);
    }
    return map(
        jsonTexts, json -> SingleValueParser.toJson(type, SingleValueParser.fromJson(type, json)));
  }

  private static int hashOf(Type type, Object value) {
    switch (type.typeId()) {
      case BOOLEAN:
        // BucketUtil has no boolean overload. The spec says "hashInt(0 or 1)", but its test
        // value (true -> 1392991556) is the int hash, which Iceberg computes as hashLong.
        return BucketUtil.hash((Boolean) value ? 1 : 0);
      case INTEGER:
      case DATE:
        return BucketUtil.hash((int) (Integer) value);
      case LONG:
      case TIME:
      case TIMESTAMP:
        return BucketUtil.hash((long) (Long) value);
      case TIMESTAMP_NANO:
        // As Bucket's BucketTimestampNano: the microseconds, floored.
        return BucketUtil.hash(DateTimeUtil.nanosToMicros((Long) value));
      case FLOAT:
        return BucketUtil.hash((float) (Float) value);
      case DOUBLE:
        return BucketUtil.hash((double) (Double) value);
      case DECIMAL:
        return BucketUtil.hash((BigDecimal) value);
      case STRING:
        return BucketUtil.hash((CharSequence) value);
      case UUID:
        return BucketUtil.hash((UUID) value);
      case FIXED:
      case BINARY:
        return BucketUtil.hash((ByteBuffer) value);
      default:
        throw new IllegalArgumentException("no hash for " + type);
    }
  }

  private static String map(String lines, Function<String, String> fn) {
    if (lines.isEmpty()) {
      return "";
    }
    String[] items = lines.split("\n", -1);
    List<String> out = new ArrayList<>(items.length);
    for (String item : items) {
      String result;
      try {
        result = fn.apply(item);
      } catch (RuntimeException e) {
        result = "!" + e.getClass().getName();
      }
      if (result != null && result.indexOf('\n') >= 0) {
        throw new IllegalStateException("a result contains a newline: " + result);
      }
      out.add(result);
    }
    return String.join("\n", out);
  }

  static Object decode(Type type, String token) {
    if (NULL.equals(token)) {
      return null;
    }
    switch (type.typeId()) {
      case BOOLEAN:
        if (!token.equals("true") && !token.equals("false")) {
          throw new IllegalArgumentException("bad boolean token " + token);
        }
        return Boolean.valueOf(token);
      case INTEGER:
      case DATE:
        return Integer.valueOf(token);
      case LONG:
      case TIME:
      case TIMESTAMP:
      case TIMESTAMP_NANO:
        return Long.valueOf(token);
      case FLOAT:
        return Float.intBitsToFloat(Integer.parseInt(token));
      case DOUBLE:
        return Double.longBitsToDouble(Long.parseLong(token));
      case DECIMAL:
        return new BigDecimal(new BigInteger(token), ((Types.DecimalType) type).scale());
      case STRING:
        return new String(unhex(token), StandardCharsets.UTF_8);
      case UUID:
        return UUID.fromString(token);
      case FIXED:
      case BINARY:
        return ByteBuffer.wrap(unhex(token));
      default:
        throw new IllegalArgumentException("no token form for " + type);
    }
  }

  static String encode(Type type, Object value) {
    if (value == null) {
      return NULL;
    }
    switch (type.typeId()) {
      case BOOLEAN:
      case INTEGER:
      case DATE:
      case LONG:
      case TIME:
      case TIMESTAMP:
      case TIMESTAMP_NANO:
        return value.toString();
      case FLOAT:
        return Integer.toString(Float.floatToRawIntBits((Float) value));
      case DOUBLE:
        return Long.toString(Double.doubleToRawLongBits((Double) value));
      case DECIMAL:
        {
          BigDecimal decimal = (BigDecimal) value;
          int scale = ((Types.DecimalType) type).scale();
          if (decimal.scale() != scale) {
            throw new IllegalStateException("decimal " + decimal + " is not of scale " + scale);
          }
          return decimal.unscaledValue().toString();
        }
      case STRING:
        return hex(((CharSequence) value).toString().getBytes(StandardCharsets.UTF_8));
      case UUID:
        return value.toString();
      case FIXED:
      case BINARY:
        if (value instanceof byte[]) {
          return hex((byte[]) value);
        }
        return hex((ByteBuffer) value);
      default:
        throw new IllegalArgumentException("no token form for " + type);
    }
  }

  static String hex(ByteBuffer buffer) {
    ByteBuffer copy = buffer.duplicate();
    byte[] bytes = new byte[copy.remaining()];
    copy.get(bytes);
    return hex(bytes);
  }

  static String hex(byte[] bytes) {
    StringBuilder sb = new StringBuilder(bytes.length * 2);
    for (byte b : bytes) {
      sb.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
    }
    return sb.toString();
  }

  static byte[] unhex(String hex) {
    if (hex.length() % 2 != 0) {
      throw new IllegalArgumentException("odd-length hex " + hex);
    }
    byte[] bytes = new byte[hex.length() / 2];
    for (int i = 0; i < bytes.length; i++) {
      int hi = Character.digit(hex.charAt(2 * i), 16);
      int lo = Character.digit(hex.charAt(2 * i + 1), 16);
      if (hi < 0 || lo < 0) {
        throw new IllegalArgumentException("bad hex " + hex);
      }
      bytes[i] = (byte) ((hi << 4) | lo);
    }
    return bytes;
  }
}
