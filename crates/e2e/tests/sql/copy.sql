-- COPY data-path cases: each runs in its own psql session (-X -a, \set VERBOSITY verbose) on
-- keel and on PostgreSQL 15, and the outputs must be identical. Malformed input must fail the
-- whole COPY with PostgreSQL's SQLSTATE, message and hint, and load nothing. Error cases set
-- SHOW_CONTEXT never: PostgreSQL names the failing line in a CONTEXT field, which keel's errors
-- cannot carry yet.

-- case: copy_csv_unterminated_quote_loads_nothing
\set SHOW_CONTEXT never
create table cq (a int, b text);
copy cq from stdin with csv;
1,"ok"
2,"never closed
3,"x"
\.
copy cq from stdin with csv;
1,"ok"
2,"open at the end
\.
select count(*) from cq;

-- case: copy_csv_row_shape_errors
\set SHOW_CONTEXT never
create table cs (a int, b text);
copy cs from stdin with csv;
1,a
2,b,c
\.
copy cs from stdin with csv;
1,a
2
\.
copy cs from stdin with csv;
x
\.
copy cs from stdin with csv;
1,"a
\.
copy cs from stdin with csv;
1,a
\.x
\.
select count(*) from cs;

-- case: copy_csv_values
create table cv (a int, b text);
copy cv from stdin with (format csv, header);
a,b
1,"q""r"
2,
3,""
4,a"b,c"d
5, x 
6,"two
lines"
7,\.
\.
copy cv from stdin with (format csv, escape '\');
8,"a\"b\\c\d"
\.
copy cv (b) from stdin with csv;
\.a
\.
select a, b, b is null as isnull from cv order by a nulls last, b;
copy cv to stdout with csv;
copy (select b from cv where a = 7) to stdout with csv;
copy (select b from cv where a = 7) to stdout with (format csv, header);

-- case: copy_csv_line_ends
\set SHOW_CONTEXT never
create table cl (a int, b text);
\pset format unaligned
\pset tuples_only on
\o cl_crlf.csv
select E'1,a\r\n2,"b\r\nc"\r';
\o cl_mixed.csv
select E'1,a\r\n2,b';
\o cl_cr.csv
select E'1,a\n2,b\rc';
\o
\pset format aligned
\pset tuples_only off
\copy cl from 'cl_crlf.csv' with csv
\copy cl from 'cl_mixed.csv' with csv
\copy cl from 'cl_cr.csv' with csv
select a, b, length(b) from cl order by a;

-- case: copy_text_escapes
\set SHOW_CONTEXT never
create table ce (a int, b text);
copy ce from stdin;
1	a\x41\x41u
2	\101\x4g\x\8\zq\N
3	a\	b
4	a\
b
5	\b\f\v\r\n\t\\
6	\xc3\xa9\303\251
7	\N
8	x\.
9	after the end marker
\.
select a, b, length(b), b is null as isnull from ce order by a;
copy ce to stdout;
copy ce to stdout with (delimiter '|');
copy ce to stdout with csv;
copy ce from stdin with (delimiter '|', null 'nil');
10|a\|b|c
11|nil
\.
copy ce from stdin with (delimiter '|', null 'nil');
11|nil
12|a\|b\\
\.
select a, b from ce where a > 9 order by a;

-- case: copy_text_format_errors
\set SHOW_CONTEXT never
create table ct (a int, b text);
copy ct from stdin;
1	a\.x
\.
copy ct from stdin;
1	a
2	\xc3
\.
copy ct from stdin;
1	\000
\.
copy ct from stdin;
1	a	b
\.
copy ct from stdin;
1
\.
copy ct from stdin;
notint
\.
copy ct from stdin;

\.
\pset format unaligned
\pset tuples_only on
\o ct_crlf.txt
select E'1\ta\r\n2\tb';
\o ct_cr.txt
select E'1\ta\n2\tb\rc';
\o ct_marker.txt
select E'1\ta\r\n\\.';
\o
\pset format aligned
\pset tuples_only off
\copy ct from 'ct_crlf.txt'
\copy ct from 'ct_cr.txt'
\copy ct from 'ct_marker.txt'
select count(*) from ct;

-- case: copy_error_after_many_rows_loads_nothing
\set SHOW_CONTEXT never
create table cb (a int);
\copy (select g::text from generate_series(1, 25000) g union all select 'bad') to 'cb.txt'
\copy cb from 'cb.txt'
select count(*) from cb;
\copy (select g::text from generate_series(1, 25000) g) to 'cb_ok.txt'
\copy cb from 'cb_ok.txt'
select count(*), sum(a) from cb;

-- case: copy_option_checks
\set SHOW_CONTEXT never
create table co (a int, b text);
copy co to stdout with (delimiter '|', null 'x|');
copy co from stdin with (delimiter 'N');
