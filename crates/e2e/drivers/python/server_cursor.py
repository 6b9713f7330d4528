#!/usr/bin/env python3
"""psycopg 3 server-side cursors for keel's driver test (crates/e2e/tests/drivers.rs).

Usage: server_cursor.py CONNINFO

A named cursor makes psycopg send `DECLARE "name" CURSOR FOR <query with $1>` through the
extended protocol, Describe the cursor's portal, then `FETCH FORWARD n FROM "name"` in
batches of `itersize`, and CLOSE it; a scrollable one also sends `MOVE` / `FETCH` backward,
and a WITH HOLD one outlives its transaction. Prints each section's rows (text and binary);
the test compares the transcript from keel with PostgreSQL's.
"""

import sys

import psycopg


def show(label, rows):
    print(f"-- {label}")
    for r in rows:
        print(repr(r))
    print(f"rows {len(rows)}")


def main(conninfo):
    with psycopg.connect(conninfo) as conn:
        conn.execute("drop table if exists sc_t")
        conn.execute("create table sc_t (a int, b text, c float8)")
        conn.execute(
            "insert into sc_t select g, 'x' || g, g / 4.0 from generate_series(1, 25) g"
        )
        conn.commit()
        for binary in (False, True):
            kind = "binary" if binary else "text"
            with conn.cursor(name="batches", binary=binary) as cur:
                cur.itersize = 7
                cur.execute("select a, b, c from sc_t where a > %s order by a", (3,))
                show(f"batches of 7 ({kind})", list(cur))
            with conn.cursor(name="scroll", scrollable=True, binary=binary) as cur:
                cur.execute("select a from sc_t where b like %s order by a", ("x1%",))
                first = cur.fetchmany(3)
                cur.scroll(-2)
                again = cur.fetchone()
                cur.scroll(1, mode="absolute")
                rest = cur.fetchall()
                show(f"scroll ({kind})", first + [again] + rest)
            conn.commit()
        with conn.cursor(name="held", withhold=True) as cur:
            cur.execute("select a from sc_t order by a desc")
            conn.commit()
            show("with hold after commit", cur.fetchmany(4))
        conn.commit()


if __name__ == "__main__":
    main(sys.argv[1])
