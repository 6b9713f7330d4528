#!/usr/bin/env python3
"""psycopg 3 client for keel's driver test (crates/e2e/tests/drivers.rs).

Usage: arrays.py CONNINFO

Round-trips int4[], int8[], text[], float8[], uuid and uuid[] through psycopg, once with every parameter
sent in text (%t) and results read in text, once with binary parameters (%b) and a binary
cursor, and prints a transcript of what came back: each value with its Python type and the
column's type OID. The test runs it against keel and against PostgreSQL 15 and compares
the two transcripts, so nothing here states an expected value.
"""

import sys
import uuid

import psycopg

TEXTS = [
    "plain",
    "a,b",
    'quote"d',
    "back\\slash",
    "{braces}",
    "with space",
    " lead and trail ",
    "NULL",
    "null",
    "ünïcødé ☃ 𝄞",
    "",
    "new\nline\ttab",
]

ROWS = [
    (
        1,
        [1, -2, 2147483647, -2147483648, 0],
        [0, -1, 9223372036854775807, -9223372036854775808, 4294967296],
        TEXTS,
        [0.5, float("nan"), float("inf"), float("-inf"), -0.0, 1e-300, 1.7976931348623157e308, -2.5e-7],
    ),
    (2, [1, None, 3], [None, 42], [None, "x", "NULL"], [None, 1.5, None]),
    (3, [], [], [], []),
    (4, None, None, None, None),
    (5, [[1, 2], [3, None]], [[-5], [6]], [["a b", "c,d"], ['"', "\\"]], [[1.25, -0.0], [float("inf"), 2.0]]),
]


def show(v):
    """A value with its driver-side type, recursively for lists."""
    if v is None:
        return "None"
    if isinstance(v, list):
        return "[" + ", ".join(show(x) for x in v) + "]"
    return f"{type(v).__name__}:{v!r}"


def wire(res, row, col):
    """A value as the server sent it: its format code, then the bytes (hex when binary)."""
    raw = res.get_value(row, col)
    if raw is None:
        return "null"
    if res.fformat(col) == 1:
        return "b:" + bytes(raw).hex()
    return "t:" + bytes(raw).decode()


def emit(line):
    print(line, flush=True)


def run(conn, label, sql, params=(), binary=False):
    """Runs one statement; prints its column type OIDs and rows, or its error."""
    emit(f"-- {label}")
    try:
        with conn.cursor(binary=binary) as cur:
            cur.execute(sql, params)
            if cur.description is None:
                emit(f"status {cur.statusmessage}")
                return
            emit("columns " + ", ".join(f"{d.name}:{d.type_code}" for d in cur.description))
            n = 0
            for row in cur.fetchall():
                emit("row " + " | ".join(show(v) for v in row))
                emit("wire " + " | ".join(wire(cur.pgresult, n, c) for c in range(len(row))))
                n += 1
            emit(f"rows {n}")
    except psycopg.Error as e:
        emit(f"error {e.sqlstate}: {str(e).splitlines()[0] if str(e) else ''}")


def round_trip(conn, fmt):
    """fmt is 't' (text parameters and results) or 'b' (binary both ways)."""
    binary = fmt == "b"
    table = f"py_arrays_{fmt}"
    ph = f"%{fmt}"
    run(conn, f"{table}: drop", f"drop table if exists {table}")
    run(conn, f"{table}: create",
        f"create table {table} (id int4 primary key, i4 int4[], i8 int8[], t text[], f8 float8[])")
    for row in ROWS:
        run(conn, f"{table}: insert id {row[0]}",
            f"insert into {table} values ({ph}, {ph}, {ph}, {ph}, {ph})", row)
    run(conn, f"{table}: select all", f"select id, i4, i8, t, f8 from {table} order by id",
        binary=binary)
    run(conn, f"{table}: as text", f"select id, i4::text, i8::text, t::text, f8::text,"
        f" array_dims(i4), cardinality(t) from {table} order by id")
    for ids in ([1, 3, 4], [2], [], [5, None, 99], [2**40]):
        if ids:  # psycopg sends an empty list untyped: nothing for pg_typeof to report
            run(conn, f"{table}: parameter type of {ids}", f"select pg_typeof({ph})::text",
                (ids,))
        run(conn, f"{table}: id = any({ids})",
            f"select id, t from {table} where id = any({ph}) order by id", (ids,), binary=binary)
    run(conn, f"{table}: id = any(list) with %s", f"select id from {table} where id = any(%s)"
        " order by id", ([4, 2],), binary=binary)
    run(conn, f"{table}: id = any(5000 ids)", f"select count(*), sum(id) from {table}"
        f" where id = any({ph})", (list(range(-2500, 2500)),), binary=binary)
    run(conn, f"{table}: text && list",
        f"select id from {table} where t && {ph}::text[] order by id", (["a,b", "x"],),
        binary=binary)
    run(conn, f"{table}: text && list, untyped",
        f"select id from {table} where t && {ph} order by id", (["NULL", "c,d"],), binary=binary)
    run(conn, f"{table}: list of NULLs", f"select {ph}::int8[] as n", ([None, None],),
        binary=binary)
    run(conn, f"{table}: 10000 elements", "select array(select g from generate_series(1, 10000)"
        " g) as a, array(select g::text from generate_series(1, 3) g) as b", binary=binary)
    run(conn, f"{table}: element = any(column)",
        f"select id from {table} where {ph} = any(t) order by id", ('quote"d',), binary=binary)
    run(conn, f"{table}: int8 = any(list)",
        f"select id from {table} where {ph} = any(i8) order by id", (9223372036854775807,),
        binary=binary)
    for i, row in enumerate(ROWS):
        run(conn, f"{table}: echo parameters of row {row[0]}",
            f"select {ph}::int4[], {ph}::int8[], {ph}::text[], {ph}::float8[]", row[1:],
            binary=binary)
        if i == 0:
            run(conn, f"{table}: update with parameters",
                f"update {table} set i4 = i4 || {ph}::int4[], t = {ph} where id = {ph}",
                ([7, 8], ["one", "two, three"], 3))
    run(conn, f"{table}: after update", f"select id, i4, t from {table} where id = 3",
        binary=binary)


def literals(conn):
    """Results the server builds itself: several dimensions, bounds other than 1, NULLs."""
    for binary in (False, True):
        mode = "binary" if binary else "text"
        run(conn, f"multi-dimensional results ({mode})",
            "select '{{1,2},{3,NULL}}'::int4[] as a, '{{{1}},{{2}}}'::int8[] as b,"
            " '{{\"a b\",\"c,d\"},{NULL,\"\\\\\"}}'::text[] as c,"
            " '{{1.5,NaN},{-0,Infinity}}'::float8[] as d,"
            " array[array[1,2],array[3,4]] as e", binary=binary)
        run(conn, f"lower bounds ({mode})",
            "select '[0:2]={7,8,9}'::int4[] as a, '[-1:0][1:1]={{1},{2}}'::int8[] as b,"
            " '{}'::text[] as c, array[]::float8[] as d", binary=binary)
        run(conn, f"specials ({mode})",
            "select array['NaN','Infinity','-Infinity','-0','1e-300','4.9e-324']::float8[] as f,"
            " array[-9223372036854775808, 9223372036854775807]::int8[] as i,"
            " array[E'tab\\there', 'quote\"', 'NULL', NULL, '', ' ']::text[] as t", binary=binary)


def uuids(conn):
    """uuid and uuid[] as Python UUIDs, sent and read in text and in binary."""
    ids = [uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), uuid.UUID(int=0),
           uuid.UUID(int=2**128 - 1)]
    run(conn, "uuid: drop", "drop table if exists py_uuids")
    run(conn, "uuid: create", "create table py_uuids (id uuid primary key, more uuid[])")
    for fmt in ("t", "b"):
        ph = f"%{fmt}"
        for n, u in enumerate(ids):
            run(conn, f"uuid: insert {fmt} {n}",
                f"insert into py_uuids values ({ph}, {ph}) on conflict (id) do update"
                " set more = excluded.more", (u, [u, None]))
        for binary in (False, True):
            run(conn, f"uuid: select {fmt} binary={binary}",
                f"select id, more, id = {ph} as hit from py_uuids order by id", (ids[0],),
                binary=binary)
            run(conn, f"uuid: id = any {fmt} binary={binary}",
                f"select id from py_uuids where id = any({ph}) order by id", (ids[1:],),
                binary=binary)


def main():
    with psycopg.connect(sys.argv[1], autocommit=True) as conn:
        emit(f"psycopg {psycopg.__version__}")
        round_trip(conn, "t")
        literals(conn)
        uuids(conn)
    # The binary round trip through named prepared statements (Parse once, Describe, Bind).
    with psycopg.connect(sys.argv[1], autocommit=True, prepare_threshold=0) as conn:
        round_trip(conn, "b")


if __name__ == "__main__":
    main()
