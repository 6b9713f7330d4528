// pgjdbc client for keel's driver test (crates/e2e/tests/drivers.rs).
//
// Usage: java -cp postgresql.jar:. Arrays PORT
//
// Round-trips int4[], int8[], text[] and float8[] through pgjdbc: parameters with
// createArrayOf/setArray and setObject(int[], long[], double[], String[]), results with
// getArray() (and getString(), and getBytes() for the bytes the server sent), once over a
// connection with binaryTransfer=false (text) and once with binaryTransfer=true and
// prepareThreshold=-1 (binary from the first execution). It prints a transcript of what came
// back, each value with its Java class; the test runs it against keel and against PostgreSQL
// 15 and compares the transcripts, so nothing here states an expected value.

import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.JDBCType;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Types;
import java.util.Properties;

public class Arrays {
    static final String[] TEXTS = {
        "plain", "a,b", "quote\"d", "back\\slash", "{braces}", "with space", " lead and trail ",
        "NULL", "null", "ünïcødé ☃ 𝄞", "", "new\nline\ttab",
    };

    /** A value with its Java class, recursively for arrays of objects and primitives. */
    static String show(Object v) {
        if (v == null) return "null";
        if (v instanceof Object[]) {
            StringBuilder b = new StringBuilder("[");
            Object[] a = (Object[]) v;
            for (int i = 0; i < a.length; i++) {
                if (i > 0) b.append(", ");
                b.append(show(a[i]));
            }
            return b.append("]").toString();
        }
        if (v.getClass().isArray()) {
            int n = java.lang.reflect.Array.getLength(v);
            StringBuilder b = new StringBuilder(v.getClass().getComponentType().getName() + "[");
            for (int i = 0; i < n; i++) {
                if (i > 0) b.append(", ");
                b.append(java.lang.reflect.Array.get(v, i));
            }
            return b.append("]").toString();
        }
        if (v instanceof String) return "String:\"" + escape((String) v) + "\"";
        return v.getClass().getSimpleName() + ":" + v;
    }

    static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n").replace("\t", "\\t");
    }

    static String hex(byte[] b) {
        if (b == null) return "null";
        StringBuilder s = new StringBuilder();
        for (byte x : b) s.append(String.format("%02x", x));
        return s.toString();
    }

    interface Binder {
        void bind(Connection c, PreparedStatement ps) throws SQLException;
    }

    static void emit(String line) {
        System.out.println(line);
    }

    /** Runs one statement; prints its columns and each row's values, or its error. */
    static void run(Connection c, String label, String sql, Binder binder) {
        emit("-- " + label);
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            if (binder != null) binder.bind(c, ps);
            if (!ps.execute()) {
                emit("status " + ps.getUpdateCount());
                return;
            }
            try (ResultSet rs = ps.getResultSet()) {
                ResultSetMetaData md = rs.getMetaData();
                int n = md.getColumnCount();
                StringBuilder cols = new StringBuilder("columns ");
                for (int i = 1; i <= n; i++) {
                    if (i > 1) cols.append(", ");
                    // getColumnType, not getColumnTypeName: for a table's column the latter asks
                    // pg_catalog whether it is a serial, which is not what this test is about.
                    cols.append(md.getColumnLabel(i)).append(':')
                        .append(JDBCType.valueOf(md.getColumnType(i)).getName());
                }
                emit(cols.toString());
                int rows = 0;
                while (rs.next()) {
                    StringBuilder row = new StringBuilder("row ");
                    StringBuilder text = new StringBuilder("string ");
                    StringBuilder wire = new StringBuilder("wire ");
                    for (int i = 1; i <= n; i++) {
                        if (i > 1) {
                            row.append(" | ");
                            text.append(" | ");
                            wire.append(" | ");
                        }
                        if (md.getColumnType(i) == Types.ARRAY) {
                            Array a = rs.getArray(i);
                            row.append(a == null ? "null" : a.getBaseTypeName() + " " + show(a.getArray()));
                        } else {
                            row.append(show(rs.getObject(i)));
                        }
                        text.append(show(rs.getString(i)));
                        wire.append(hex(rs.getBytes(i)));
                    }
                    emit(row.toString());
                    emit(text.toString());
                    emit(wire.toString());
                    rows++;
                }
                emit("rows " + rows);
            }
        } catch (SQLException e) {
            emit("error " + e.getSQLState() + ": " + e.getMessage().lines().findFirst().orElse(""));
        }
    }

    static void insert(Connection c, String table, int id, Binder binder) {
        run(c, table + ": insert id " + id, "insert into " + table + " values (?, ?, ?, ?, ?)",
            (conn, ps) -> {
                ps.setInt(1, id);
                binder.bind(conn, ps);
            });
    }

    static void roundTrip(Connection c, String table) {
        run(c, table + ": drop", "drop table if exists " + table, null);
        run(c, table + ": create", "create table " + table
            + " (id int4 primary key, i4 int4[], i8 int8[], t text[], f8 float8[])", null);
        insert(c, table, 1, (conn, ps) -> {
            ps.setObject(2, new int[] {1, -2, 2147483647, -2147483648, 0});
            ps.setObject(3, new long[] {0, -1, Long.MAX_VALUE, Long.MIN_VALUE, 4294967296L});
            ps.setArray(4, conn.createArrayOf("text", TEXTS));
            ps.setObject(5, new double[] {0.5, Double.NaN, Double.POSITIVE_INFINITY,
                Double.NEGATIVE_INFINITY, -0.0, 1e-300, Double.MAX_VALUE, -2.5e-7});
        });
        insert(c, table, 2, (conn, ps) -> {
            ps.setArray(2, conn.createArrayOf("int4", new Integer[] {1, null, 3}));
            ps.setArray(3, conn.createArrayOf("int8", new Long[] {null, 42L}));
            ps.setArray(4, conn.createArrayOf("text", new String[] {null, "x", "NULL"}));
            ps.setArray(5, conn.createArrayOf("float8", new Double[] {null, 1.5, null}));
        });
        insert(c, table, 3, (conn, ps) -> {
            ps.setObject(2, new int[0]);
            ps.setObject(3, new long[0]);
            ps.setObject(4, new String[0]);
            ps.setObject(5, new double[0]);
        });
        insert(c, table, 4, (conn, ps) -> {
            for (int i = 2; i <= 5; i++) ps.setNull(i, Types.ARRAY);
        });
        insert(c, table, 5, (conn, ps) -> {
            ps.setArray(2, conn.createArrayOf("int4", new Integer[][] {{1, 2}, {3, null}}));
            ps.setArray(3, conn.createArrayOf("int8", new Long[][] {{-5L}, {6L}}));
            ps.setArray(4, conn.createArrayOf("text", new String[][] {{"a b", "c,d"}, {"\"", "\\"}}));
            ps.setArray(5, conn.createArrayOf("float8", new Double[][] {{1.25, -0.0}, {Double.POSITIVE_INFINITY, 2.0}}));
        });
        run(c, table + ": select all", "select id, i4, i8, t, f8 from " + table + " order by id", null);
        run(c, table + ": as text", "select id, i4::text, i8::text, t::text, f8::text,"
            + " array_dims(i4), cardinality(t) from " + table + " order by id", null);
        String any = "select id, t from " + table + " where id = any(?) order by id";
        run(c, table + ": id = any(createArrayOf int4 {1,3,4})", any,
            (conn, ps) -> ps.setArray(1, conn.createArrayOf("int4", new Integer[] {1, 3, 4})));
        run(c, table + ": id = any(int[] {2})", any, (conn, ps) -> ps.setObject(1, new int[] {2}));
        run(c, table + ": id = any(int[] {})", any, (conn, ps) -> ps.setObject(1, new int[0]));
        run(c, table + ": id = any(Integer[] {5,null,99})", any,
            (conn, ps) -> ps.setArray(1, conn.createArrayOf("integer", new Integer[] {5, null, 99})));
        run(c, table + ": id = any(long[] {1, 2^40})", any,
            (conn, ps) -> ps.setObject(1, new long[] {1, 1L << 40}));
        run(c, table + ": id = any(String[] {\"3\",\"2\"})", any,
            (conn, ps) -> ps.setArray(1, conn.createArrayOf("varchar", new String[] {"3", "2"})));
        run(c, table + ": text && list", "select id from " + table + " where t && ? order by id",
            (conn, ps) -> ps.setArray(1, conn.createArrayOf("text", new String[] {"a,b", "x"})));
        run(c, table + ": element = any(column)", "select id from " + table
            + " where ? = any(t) order by id", (conn, ps) -> ps.setString(1, "quote\"d"));
        run(c, table + ": int8 = any(column)", "select id from " + table
            + " where ? = any(i8) order by id", (conn, ps) -> ps.setLong(1, Long.MAX_VALUE));
        run(c, table + ": echo parameters", "select ?::int4[], ?::int8[], ?::text[], ?::float8[]",
            (conn, ps) -> {
                ps.setObject(1, new int[] {-1, 0, 1});
                ps.setArray(2, conn.createArrayOf("bigint", new Long[] {Long.MIN_VALUE, null}));
                ps.setObject(3, new String[] {"NULL", null, "{}", "a\"b\\c"});
                ps.setArray(4, conn.createArrayOf("float8", new Double[] {Double.NaN, -0.0, 1e-300, null}));
            });
        run(c, table + ": update with parameters", "update " + table
            + " set i4 = i4 || ?, t = ? where id = ?", (conn, ps) -> {
                ps.setObject(1, new int[] {7, 8});
                ps.setArray(2, conn.createArrayOf("text", new String[] {"one", "two, three"}));
                ps.setInt(3, 3);
            });
        run(c, table + ": after update", "select id, i4, t from " + table + " where id = 3", null);
    }

    static void literals(Connection c, String mode) {
        run(c, "multi-dimensional results (" + mode + ")",
            "select '{{1,2},{3,NULL}}'::int4[] as a, '{{{1}},{{2}}}'::int8[] as b,"
            + " '{{\"a b\",\"c,d\"},{NULL,\"\\\\\"}}'::text[] as c,"
            + " '{{1.5,NaN},{-0,Infinity}}'::float8[] as d,"
            + " array[array[1,2],array[3,4]] as e", null);
        run(c, "lower bounds (" + mode + ")",
            "select '[0:2]={7,8,9}'::int4[] as a, '[-1:0][1:1]={{1},{2}}'::int8[] as b,"
            + " '{}'::text[] as c, array[]::float8[] as d", null);
        run(c, "specials (" + mode + ")",
            "select array['NaN','Infinity','-Infinity','-0','1e-300','4.9e-324']::float8[] as f,"
            + " array[-9223372036854775808, 9223372036854775807]::int8[] as i,"
            + " array[E'tab\\there', 'quote\"', 'NULL', NULL, '', ' ']::text[] as t", null);
    }

    public static void main(String[] args) throws SQLException {
        String url = "jdbc:postgresql://127.0.0.1:" + args[0] + "/postgres";
        for (boolean binary : new boolean[] {false, true}) {
            Properties p = new Properties();
            p.setProperty("user", "postgres");
            p.setProperty("binaryTransfer", Boolean.toString(binary));
            if (binary) p.setProperty("prepareThreshold", "-1");
            String mode = binary ? "binary" : "text";
            try (Connection c = DriverManager.getConnection(url, p)) {
                emit("== " + c.getMetaData().getDriverName() + " "
                    + c.getMetaData().getDriverVersion() + ", " + mode);
                roundTrip(c, "jdbc_arrays_" + (binary ? "b" : "t"));
                literals(c, mode);
            }
        }
    }
}
