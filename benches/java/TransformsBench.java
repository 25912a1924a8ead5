// Times Apache Iceberg Java's partition transforms inside the JVM for
// benches/bench_transforms.py, which compiles this file with javac at run time and
// drives it over stdin/stdout so Java's repetitions interleave with the Python ones.
//
// Usage: java -cp <iceberg-runtime.jar>:<classes> TransformsBench <data dir>
// The data dir holds the benchmark's values as little-endian files written by the
// Python side (see write_java_inputs there). Commands, one per line on stdin:
//   warm <case> <reps>   run a case <reps> times untimed (JIT warm-up); replies "ok"
//   time <case>          run a case once; replies the elapsed nanoseconds
//   check <case> <file>  run a case once and write its output to <file>; replies "ok"
//   quit
// Values are boxed before timing: Iceberg's bound functions take boxed objects
// (Long, Integer, CharSequence, BigDecimal), so the loop measures the transform
// call itself, not the boxing or decoding of the inputs.

import java.io.BufferedReader;
import java.io.DataOutputStream;
import java.io.FileOutputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.apache.iceberg.transforms.Transforms;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SerializableFunction;

public class TransformsBench {
  private static Long[] int64;
  private static Integer[] int32;
  private static String[] strings;
  private static BigDecimal[] decimals;
  private static Long[] timestamps;
  private static int[] intOut;
  private static Object[] objOut;
  // Folded from every result so the JIT cannot drop the work.
  private static long sink;

  @SuppressWarnings("unchecked")
  private static <S, T> SerializableFunction<S, T> bind(String transform, Type type) {
    return (SerializableFunction<S, T>) Transforms.fromString(transform).bind(type);
  }

  private static final SerializableFunction<Long, Integer> BUCKET_LONG =
      bind("bucket[16]", Types.LongType.get());
  private static final SerializableFunction<Integer, Integer> BUCKET_INT =
      bind("bucket[16]", Types.IntegerType.get());
  private static final SerializableFunction<CharSequence, Integer> BUCKET_STRING =
      bind("bucket[16]", Types.StringType.get());
  private static final SerializableFunction<BigDecimal, Integer> BUCKET_DECIMAL =
      bind("bucket[16]", Types.DecimalType.of(18, 2));
  private static final SerializableFunction<Long, Long> TRUNCATE_LONG =
      bind("truncate[10]", Types.LongType.get());
  private static final SerializableFunction<CharSequence, CharSequence> TRUNCATE_STRING =
      bind("truncate[4]", Types.StringType.get());
  private static final SerializableFunction<Long, Integer> YEAR =
      bind("year", Types.TimestampType.withoutZone());
  private static final SerializableFunction<Long, Integer> MONTH =
      bind("month", Types.TimestampType.withoutZone());
  private static final SerializableFunction<Long, Integer> DAY =
      bind("day", Types.TimestampType.withoutZone());
  private static final SerializableFunction<Long, Integer> HOUR =
      bind("hour", Types.TimestampType.withoutZone());

  // One loop method per case, so that each call site sees a single receiver class
  // and the JIT can inline it, as it would in a job that applies one transform.
  private static void bucketLong() {
    for (int i = 0; i < int64.length; i++) {
      intOut[i] = BUCKET_LONG.apply(int64[i]);
    }
  }

  private static void bucketInt() {
    for (int i = 0; i < int32.length; i++) {
      intOut[i] = BUCKET_INT.apply(int32[i]);
    }
  }

  private static void bucketString() {
    for (int i = 0; i < strings.length; i++) {
      intOut[i] = BUCKET_STRING.apply(strings[i]);
    }
  }

  private static void bucketDecimal() {
    for (int i = 0; i < decimals.length; i++) {
      intOut[i] = BUCKET_DECIMAL.apply(decimals[i]);
    }
  }

  private static void truncateLong() {
    for (int i = 0; i < int64.length; i++) {
      objOut[i] = TRUNCATE_LONG.apply(int64[i]);
    }
  }

  private static void truncateString() {
    for (int i = 0; i < strings.length; i++) {
      objOut[i] = TRUNCATE_STRING.apply(strings[i]);
    }
  }

  private static void year() {
    for (int i = 0; i < timestamps.length; i++) {
      intOut[i] = YEAR.apply(timestamps[i]);
    }
  }

  private static void month() {
    for (int i = 0; i < timestamps.length; i++) {
      intOut[i] = MONTH.apply(timestamps[i]);
    }
  }

  private static void day() {
    for (int i = 0; i < timestamps.length; i++) {
      intOut[i] = DAY.apply(timestamps[i]);
    }
  }

  private static void hour() {
    for (int i = 0; i < timestamps.length; i++) {
      intOut[i] = HOUR.apply(timestamps[i]);
    }
  }

  /** Runs one case once; returns the number of values it produced. */
  private static int run(String name) {
    switch (name) {
      case "bucket_int64":
        bucketLong();
        return int64.length;
      case "bucket_int32":
        bucketInt();
        return int32.length;
      case "bucket_string":
        bucketString();
        return strings.length;
      case "bucket_decimal":
        bucketDecimal();
        return decimals.length;
      case "truncate_int64":
        truncateLong();
        return int64.length;
      case "truncate_string":
        truncateString();
        return strings.length;
      case "year":
        year();
        return timestamps.length;
      case "month":
        month();
        return timestamps.length;
      case "day":
        day();
        return timestamps.length;
      case "hour":
        hour();
        return timestamps.length;
      default:
        throw new IllegalArgumentException("unknown case: " + name);
    }
  }

  private static boolean objectOutput(String name) {
    return name.startsWith("truncate_");
  }

  private static void fold(String name, int n) {
    if (objectOutput(name)) {
      sink += objOut[n - 1].hashCode();
    } else {
      sink += intOut[n - 1];
    }
  }

  private static ByteBuffer read(Path dir, String file) throws IOException {
    return ByteBuffer.wrap(Files.readAllBytes(dir.resolve(file))).order(ByteOrder.LITTLE_ENDIAN);
  }

  private static Long[] readLongs(Path dir, String file) throws IOException {
    ByteBuffer buf = read(dir, file);
    Long[] out = new Long[buf.remaining() / 8];
    for (int i = 0; i < out.length; i++) {
      out[i] = buf.getLong();
    }
    return out;
  }

  private static void load(Path dir) throws IOException {
    int64 = readLongs(dir, "int64.bin");
    timestamps = readLongs(dir, "timestamp_us.bin");
    ByteBuffer ints = read(dir, "int32.bin");
    int32 = new Integer[ints.remaining() / 4];
    for (int i = 0; i < int32.length; i++) {
      int32[i] = ints.getInt();
    }
    ByteBuffer offsets = read(dir, "string_offsets.bin");
    byte[] data = Files.readAllBytes(dir.resolve("string_data.bin"));
    strings = new String[offsets.remaining() / 4 - 1];
    int start = offsets.getInt();
    for (int i = 0; i < strings.length; i++) {
      int end = offsets.getInt();
      strings[i] = new String(data, start, end - start, StandardCharsets.UTF_8);
      start = end;
    }
    ByteBuffer unscaled = read(dir, "decimal_unscaled.bin");
    decimals = new BigDecimal[unscaled.remaining() / 8];
    for (int i = 0; i < decimals.length; i++) {
      decimals[i] = new BigDecimal(BigInteger.valueOf(unscaled.getLong()), 2);
    }
    int max = Math.max(Math.max(int64.length, int32.length), timestamps.length);
    max = Math.max(max, Math.max(strings.length, decimals.length));
    intOut = new int[max];
    objOut = new Object[max];
  }

  /** Writes a case's output: int32 or int64 LE, or string offsets then UTF-8 bytes. */
  private static void check(String name, String file) throws IOException {
    int n = run(name);
    try (DataOutputStream out =
        new DataOutputStream(new BufferedOutputStream(new FileOutputStream(file), 1 << 20))) {
      ByteBuffer word = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
      if (name.equals("truncate_int64")) {
        for (int i = 0; i < n; i++) {
          word.clear();
          word.putLong((Long) objOut[i]);
          out.write(word.array(), 0, 8);
        }
      } else if (name.equals("truncate_string")) {
        byte[][] encoded = new byte[n][];
        int offset = 0;
        for (int i = 0; i < n; i++) {
          encoded[i] = objOut[i].toString().getBytes(StandardCharsets.UTF_8);
          word.clear();
          word.putInt(offset);
          out.write(word.array(), 0, 4);
          offset += encoded[i].length;
        }
        word.clear();
        word.putInt(offset);
        out.write(word.array(), 0, 4);
        for (byte[] bytes : encoded) {
          out.write(bytes);
        }
      } else {
        for (int i = 0; i < n; i++) {
          word.clear();
          word.putInt(intOut[i]);
          out.write(word.array(), 0, 4);
        }
      }
    }
  }

  public static void main(String[] args) throws IOException {
    load(Paths.get(args[0]));
    PrintStream reply = System.out;
    reply.println("ready " + System.getProperty("java.version"));
    reply.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      String[] cmd = line.trim().split(" ");
      switch (cmd[0]) {
        case "warm":
          for (int r = 0; r < Integer.parseInt(cmd[2]); r++) {
            fold(cmd[1], run(cmd[1]));
          }
          reply.println("ok");
          break;
        case "time":
          long t0 = System.nanoTime();
          int n = run(cmd[1]);
          long elapsed = System.nanoTime() - t0;
          fold(cmd[1], n);
          reply.println(elapsed);
          break;
        case "check":
          check(cmd[1], cmd[2]);
          reply.println("ok");
          break;
        case "quit":
          reply.println("bye " + sink);
          reply.flush();
          return;
        default:
          reply.println("error unknown command: " + line);
      }
      reply.flush();
    }
  }
}
