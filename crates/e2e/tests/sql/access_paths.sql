-- Access paths chosen by cost: sequential, index and bitmap heap scans, and ORDER BY read
-- from an index in key order (with and without LIMIT). Each "-- case:" block runs in its own
-- psql session on keel and on PostgreSQL 15 and the outputs must be identical. The plans are
-- printed too, so a plan that differs from PostgreSQL's fails the case.

-- case: scans_by_cost
create table ap (id int primary key, cid int, created int, note text);
insert into ap select g, (g * 7919) % 1000, g, 'n' || g from generate_series(1, 50000) g;
insert into ap values (50001, null, null, 'no customer');
create index ap_created on ap (created);
create index ap_cid on ap (cid);
analyze ap;
explain (costs off) select * from ap where cid = 5;
select count(*), sum(id), min(note), max(note) from ap where cid = 5;
explain (costs off) select * from ap where cid = 5 and note like 'n1%';
select id, note from ap where cid = 5 and note like 'n1%' order by id;
select count(*) from ap where cid between 3 and 7;
select count(*) from ap where cid > 995;
select count(*) from ap where cid is null;
explain (costs off) select * from ap where id > 5;
select count(*) from ap where id > 5;
explain (costs off) select * from ap where id between 100 and 110;
select id from ap where id between 100 and 110;
-- A row whose indexed column changed is found through its new entry only, once.
update ap set cid = 6 where id in (select id from ap where cid = 5 and id < 20000);
select count(*), sum(id) from ap where cid = 5;
select count(*), sum(id) from ap where cid = 6;
select count(*) from ap where cid in (5, 6);
delete from ap where cid = 6 and id % 2 = 0;
select count(*), sum(id) from ap where cid = 6;

-- case: order_from_an_index
create table ao (id int primary key, k int, v text);
insert into ao select g, (g * 37) % 1000, 'v' || g from generate_series(1, 20000) g;
insert into ao values (20001, null, 'null k');
create index ao_k on ao (k);
analyze ao;
explain (costs off) select * from ao order by k limit 5;
select * from ao order by k, id limit 5;
select id, k from ao order by k limit 5 offset 20;
explain (costs off) select * from ao order by id;
select count(*) from (select id from ao order by id) s;
select k from ao order by k desc limit 3;
select k, id from ao where k >= 990 order by k, id limit 7;
select id, k from ao where k is null order by k limit 1;
select k from ao order by k nulls first limit 2;
select v from ao order by v limit 4;

-- case: index_only_scans
-- After VACUUM the visibility map lets an index-only scan answer from the index; every change
-- to a row clears its page's bit, so later scans read the heap for it (Heap Fetches > 0 on
-- both engines) and see the change: an update of the key (its old entry stays, stale), a
-- delete, an insert, an aborted key change.
create table io (id int primary key, k int, t text, pad text);
insert into io select g, g % 100, 't' || (g % 50), repeat('x', 200) from generate_series(1, 20000) g;
create index io_k on io (k);
create index io_t_k on io (t, k);
vacuum analyze io;
explain (costs off) select k from io where k = 7;
select count(*), sum(k) from io where k = 7;
explain (costs off) select count(*) from io where k between 10 and 12;
select count(*) from io where k between 10 and 12;
explain (costs off) select t, k from io where t = 't3' and k = 3;
select t, k, count(*) from io where t = 't3' group by t, k;
explain (costs off) select id from io where id between 100 and 105;
select id from io where id between 100 and 105;
update io set k = 1007 where id in (7, 107, 207);
select count(*), sum(k) from io where k = 7;
select k from io where k = 1007 order by k;
delete from io where id in (307, 407);
select count(*) from io where k = 7;
insert into io values (20001, 7, 't7', 'new');
select count(*) from io where k = 7;
begin;
update io set k = 2007 where id = 507;
rollback;
select count(*) from io where k = 7;
select count(*) from io where k = 2007;
select id from io where id between 100 and 110 order by id;
vacuum io;
select count(*), sum(k) from io where k = 7;
select count(*) from io where k = 1007;
select count(*) from io where k = 2007;

-- case: backward_index_scans
-- ORDER BY ... DESC (NULLS FIRST, the default) reads a B-tree backward; NULLs come first, a
-- prefix fixed by equality keeps the order, bounds hold at both ends. Keys are unique where
-- rows are printed: the order among equal keys is not defined (PostgreSQL returns the row
-- ids of one posting list in ascending order even backward).
create table bw (id int primary key, g int, k int, t text);
insert into bw select x, x % 7, (x * 37) % 30011, 't' || x from generate_series(1, 30000) x;
insert into bw values (30001, 1, null, null);
create index bw_k on bw (k);
create index bw_g_k on bw (g, k);
create index bw_t on bw (t);
vacuum analyze bw;
explain (costs off) select id, k from bw order by k desc limit 5;
select id, k from bw order by k desc limit 5;
select id, k from bw order by k desc limit 12 offset 3;
explain (costs off) select k from bw where g = 3 order by k desc limit 4;
select k from bw where g = 3 order by k desc limit 4;
select g, k from bw where g = 3 order by g desc, k desc limit 4;
explain (costs off) select id from bw order by id desc limit 3;
select id from bw order by id desc limit 3;
select id from bw where id < 100 order by id desc limit 3;
select id from bw where id between 5 and 9 order by id desc;
select t from bw where t > 't95' order by t desc limit 5;
select t from bw where t like 't29%' order by t desc nulls first limit 3;
select k from bw where k is not null order by k desc limit 3;
update bw set k = 30500 where id = 5;
delete from bw where id = 6;
select id, k from bw order by k desc limit 3;

-- case: index_conditions_are_not_rechecked
-- An index scan's B-tree range alone decides its conditions: a lower bound alone stops
-- before the NULL keys, and an entry whose row has since moved to another key is not
-- returned under its old one (a new entry holds the new key).
create table rk (id int primary key, k int, t text);
insert into rk select x, (x * 37) % 20011, 't' || x from generate_series(1, 20000) x;
insert into rk select x, null, null from generate_series(20001, 20100) x;
create index rk_k on rk (k);
create index rk_t on rk (t);
vacuum analyze rk;
select id, k from rk where k > 19990 order by k;
select count(*) from rk where k >= 19000;
select t from rk where t >= 't9995' order by t;
update rk set k = k + 50000 where id between 1 and 300;
select count(*) from rk where k >= 0 and k < 2000;
select count(*), min(k), max(k) from rk where k >= 50000;
select id, k from rk where k between 50000 and 50400 order by k;
begin;
update rk set t = 'moved' || id where id between 9990 and 9999;
select t from rk where t >= 't9995' order by t;
select t from rk where t >= 'moved' and t < 'movee' order by t;
rollback;
select t from rk where t >= 't9995' order by t;

-- case: min_max_through_an_index
-- min/max of an indexed column read one entry through the index (an InitPlan each), NULLs
-- skipped; an empty table or range gives NULL; other aggregates read the table.
create table mm (id int primary key, k int, t text, g int);
insert into mm select x, case when x % 10 = 0 then null else (x * 7) % 9973 end, 'v' || x, x % 5 from generate_series(1, 20000) x;
create index mm_k on mm (k);
create index mm_g_k on mm (g, k);
create index mm_t on mm (t);
vacuum analyze mm;
explain (costs off) select max(k) from mm;
select max(k) from mm;
explain (costs off) select min(k), max(k) from mm;
select min(k), max(k) from mm;
select min(t), max(t) from mm;
explain (costs off) select max(k) from mm where g = 3;
select max(k) from mm where g = 3;
select min(k) from mm where g = 3 and k > 100;
select max(id) from mm where id < 0;
select min(k), count(*) from mm;
select max(k) + 1 as next, min(id) from mm;
select max(k) from mm having max(k) > 5;
delete from mm;
select min(k), max(k), max(id) from mm;

-- case: constant_expressions_fold
-- Operators over constants of types no setting affects fold when the statement is planned:
-- the folded value is the index condition (and what the statistics are read with); an
-- operator that fails on its constants fails when it runs.
create table cf (id int primary key, at timestamp, n int, d date);
insert into cf select g, timestamp '2024-01-01' + g * interval '1 hour', g % 100,
  date '2024-01-01' + g / 24 from generate_series(1, 20000) g;
create index cf_at on cf (at);
analyze cf;
explain (costs off) select count(*) from cf
  where at >= timestamp '2024-01-01' + 100 * interval '1 day'
    and at < timestamp '2024-01-01' + (100 + 1) * interval '1 day';
select count(*) from cf
  where at >= timestamp '2024-01-01' + 100 * interval '1 day'
    and at < timestamp '2024-01-01' + (100 + 1) * interval '1 day';
explain (costs off) select id from cf where id < 10 * 10 and n = 40 + 2;
select id from cf where id < 10 * 10 and n = 40 + 2 order by id;
select count(*) from cf where d = date '2024-01-01' + 7;
select count(*) from cf where n > 2.5 * 38;
select 1 / 0 from cf where id = 5;
select count(*) from cf where n > 2147483647 + 1;
select null::int + 1, 7 % null, 1.5 * 2;

-- case: equality_filters_on_stored_bytes
-- Sequential and index scans test `column = constant` on the rows' stored bytes before
-- decoding them, for the types whose equal values have equal bytes. Values that are equal
-- with different bytes (-0 and 0, 1.0 and 1.00, 'a' and 'a  ' as char(3), 1 day and 24
-- hours) must still match, long runs of rows that fail must not hide the rows that pass, and
-- NULLs never pass.
create table fb (id int primary key, i2 int2, i4 int, i8 int8, t text, v varchar(10),
                 c char(3), b bool, d date, ts timestamp, tz timestamptz, f float8,
                 n numeric, iv interval, by bytea);
insert into fb select g, (g % 7)::int2, g % 100, g % 1000, 'k' || (g % 50), 'v' || (g % 9),
                      (case when g % 2 = 0 then 'a' else 'b' end), g % 3 = 0,
                      date '2026-01-01' + g % 30, timestamp '2026-01-01' + (g % 24) * interval '1 hour',
                      timestamptz '2026-01-01 00:00+00' + (g % 5) * interval '1 day',
                      case when g % 2 = 0 then '0'::float8 else '-0'::float8 end,
                      case when g % 2 = 0 then 1.0 else 1.00 end,
                      case when g % 2 = 0 then interval '1 day' else interval '24 hours' end,
                      ('\x' || lpad(to_hex(g % 16), 2, '0'))::bytea
  from generate_series(1, 5000) g;
insert into fb (id) values (5001);
select count(*) from fb where i2 = 3;
select count(*) from fb where i4 = 42;
select count(*), min(id) from fb where i8 = 999;
select count(*) from fb where t = 'k7';
select count(*) from fb where 'k7' = t and i4 = 7;
select count(*) from fb where v = 'v3';
select count(*) from fb where c = 'a';
select count(*) from fb where c = 'a  ';
select count(*) from fb where b = true;
select count(*) from fb where d = date '2026-01-05';
select count(*) from fb where ts = timestamp '2026-01-01 05:00';
select count(*) from fb where tz = timestamptz '2026-01-03 00:00+00';
select count(*) from fb where f = 0;
select count(*) from fb where f = -0.0;
select count(*) from fb where n = 1;
select count(*) from fb where n = 1.000;
select count(*) from fb where iv = interval '1 day';
select count(*) from fb where by = '\x0a'::bytea;
select count(*) from fb where i4 = 42 and t = 'k42';
select count(*) from fb where i4 = 42 and t = 'k43';
select count(*) from fb where i4 = 42 or t = 'k43';
select id from fb where i8 = 999 or id = 5001 order by id;
select count(*) from fb where t = null;
select count(*) from fb where i4 = 4.0;
select count(*) from fb where i8 = 42::int4;
-- Through the primary key with a filter: the first row that passes after a long run of
-- rows that do not.
select id from fb where t = 'k49' order by id limit 1;
select id from fb where i4 = 99 and t = 'k49' order by id limit 3;
update fb set t = 'moved' where id between 1 and 4000 and t = 'k49';
select id from fb where t = 'k49' order by id limit 1;
select count(*) from fb where t = 'moved';
delete from fb where t = 'moved';
select count(*) from fb where t = 'moved';
