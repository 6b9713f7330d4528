-- Each "-- case:" block runs in its own psql session (-X -a, \set VERBOSITY verbose) on keel
-- and on PostgreSQL 15; the outputs (stdout and stderr interleaved, LOCATION lines dropped)
-- must be identical. Table names are unique per case: cases share one database.

-- case: create_insert_returning
create table items (id serial primary key, name text not null, qty int default 0, price numeric(10,2));
insert into items (name, qty, price) values ('apple', 3, 1.50), ('pear', 0, 2.25) returning id, name, qty;
insert into items (name) values ('plum') returning *;
insert into items (name, qty) values (null, 1);
select * from items order by id;

-- case: update_delete
create table ud (id int primary key, v int, tag text);
insert into ud select g, g * 10, case when g % 2 = 0 then 'even' else 'odd' end from generate_series(1, 10) g;
update ud set v = v + 1 where tag = 'even';
update ud set tag = 'big' where v > 80 returning id, v, tag;
delete from ud where id in (1, 3) returning *;
delete from ud where id = 999;
select * from ud order by id;

-- case: select_clauses
create table sc (id int, grp text, val int);
insert into sc values (1,'a',10),(2,'a',20),(3,'b',5),(4,'b',null),(5,'c',7),(6,'c',8),(7,'c',9);
select * from sc where val > 6 order by val desc;
select * from sc order by id limit 3 offset 2;
select grp, count(*), count(val), sum(val), min(val), max(val), avg(val) from sc group by grp order by grp;
select grp, sum(val) from sc group by grp having sum(val) > 20 order by 1;
select count(*), sum(val), avg(val)::numeric(10,4) from sc;
select distinct grp from sc order by grp;
select * from sc where val is null;
select id, val from sc order by val nulls first, id;

-- case: joins_subqueries
create table dept (id int primary key, name text);
create table emp (id int primary key, dept_id int, name text, salary int);
insert into dept values (1, 'eng'), (2, 'ops'), (3, 'empty');
insert into emp values (1, 1, 'ann', 100), (2, 1, 'bob', 90), (3, 2, 'cid', 80), (4, null, 'dan', 70);
select e.name, d.name from emp e join dept d on d.id = e.dept_id order by e.id;
select e.name, d.name from emp e left join dept d on d.id = e.dept_id order by e.id;
select d.name, count(e.id) from dept d left join emp e on e.dept_id = d.id group by d.name order by d.name;
select s.dept_id, s.total from (select dept_id, sum(salary) as total from emp group by dept_id) s where s.total > 75 order by s.dept_id nulls last;
select name from emp where salary > (select avg(salary) from emp) order by name;
select name from emp where dept_id in (select id from dept where name = 'eng') order by name;
select count(*) from emp, dept;

-- case: transactions
create table tx (id int primary key, v text);
begin;
insert into tx values (1, 'committed');
commit;
begin;
insert into tx values (2, 'rolled back');
rollback;
begin;
insert into tx values (3, 'before error');
insert into tx values (1, 'duplicate');
select 1;
rollback;
start transaction;
update tx set v = 'updated' where id = 1;
end;
select * from tx order by id;

-- case: truncate
create table tr (id int);
insert into tr select generate_series(1, 100);
select count(*) from tr;
truncate tr;
select count(*) from tr;
begin;
insert into tr values (1);
truncate table tr;
rollback;
select count(*) from tr;

-- case: set_show
set work_mem = '8MB';
show work_mem;
set synchronous_commit = off;
show synchronous_commit;
reset synchronous_commit;
show synchronous_commit;
set search_path to public;
show search_path;
set no_such_setting = 1;

-- case: reset_keeps_startup_values
-- psql sends application_name in its startup packet: RESET returns to it, not to empty.
set application_name = 'changed';
show application_name;
reset application_name;
show application_name;
set application_name = 'changed';
reset all;
show application_name;

-- case: casts_and_arithmetic
select '12'::int, 3.7::int, -3.5::int, 10 / 3, 10 % 3, 10.0 / 3, 2 ^ 10;
select 1::text || 'x', 'true'::bool, 't'::boolean, 1::bigint * 3000000000;
select '2024-01-02'::date, '2024-02-29'::date + 1, cast('42' as smallint);
select 1.5::numeric(5,2), 12345.678::numeric(7,2), round(2.5), round(-2.5), trunc(2.7);
select 'abc'::int;
select 2147483647 + 1;
select 1 / 0;
select null::int is null, coalesce(null, 5), nullif(3, 3), greatest(1, 7, 3), least(4, 2);

-- case: generate_series_timestamps
-- Timestamps stepped by an interval: each value is the previous one plus the step (31 Jan +
-- 1 month -> 29 Feb -> 29 Mar), dates and untyped literals resolve to timestamptz.
select * from generate_series('2024-01-01'::timestamp, '2024-01-03', '1 day');
select generate_series('2024-01-31'::timestamp, '2024-05-01', '1 month') as m;
select pg_typeof(g)::text, g from generate_series('2024-01-01'::date, '2024-01-02'::date, '12 hours') g;
select * from generate_series('2024-01-03 00:00'::timestamptz, '2024-01-01', '-1 day');
select count(*) from generate_series('2024-01-01'::timestamp, '2024-01-01', '1 hour');
select count(*) from generate_series('2024-01-01'::timestamp, '2023-01-03', '1 day');
select count(*) from generate_series('2024-01-01'::timestamp, null, '1 day');
select * from generate_series('2024-01-01', '2024-01-03', '1 day'::interval);
select * from generate_series('2024-01-01'::timestamp, '2024-01-03', '0 day');
select * from generate_series('2024-01-01'::timestamp, '2024-01-03');
select * from generate_series('294276-12-31 00:00'::timestamp, 'infinity', '1 day');

-- case: functions
select md5('abc'), md5(''), length('hello'), upper('hi'), lower('HI'), substr('abcdef', 2, 3);
select g, g * g from generate_series(1, 5) g;
select generate_series(1, 3);
select sum(x) from generate_series(1, 1000) x;
select string_agg(s, ',' order by s) from (values ('b'), ('a'), ('c')) v(s);
select abs(-5), mod(17, 5), 'a' || null, concat('a', null, 'b'), repeat('ab', 3), replace('hello', 'l', 'L');
select case when 1 > 2 then 'yes' else 'no' end, position('c' in 'abcd'), trim('  x  ');

-- case: join_keys_of_every_expression_shape
create temp table ja (x int, pad int);
create temp table jb (pad1 int, pad2 int, y int);
insert into ja values (1, 10), (0, 20);
insert into jb values (100, 200, 5), (100, 200, -5), (100, 200, null);
select x, pad, y from ja join jb on ja.x = case when jb.y > 0 then 1 else 0 end order by x, y;
select x, y from ja join jb on ja.x = (jb.y is null)::int order by x, y;
select x, y from ja join jb on ja.x = (not (jb.y > 0))::int order by x, y;
select x, y from ja join jb on ja.x = ((jb.y > 0) is true)::int order by x, y;
select x, y from ja join jb on ja.x = (jb.y is not distinct from 5)::int order by x, y;
select x, y from ja join jb on ja.x + 4 = greatest(jb.y, 0) order by x, y;
select x, y from ja join jb on ja.x = coalesce(jb.y, 1) order by x, y;
select x, y from ja join jb on ja.x = (jb.y > 0 and jb.y < 10)::int order by x, y;
select x, y from ja join jb on ja.x = (select max(x) from ja) and jb.y = 5 order by x, y;

-- case: pg_sleep
\pset null (null)
select pg_sleep(0.05);
select pg_sleep(null) is null as strict, pg_typeof(pg_sleep(0));
select pg_sleep('0.01'), pg_sleep(-1), pg_sleep('NaN'), pg_sleep(0.01::numeric);
select pg_sleep('a'::text);
select pg_sleep(1, 2);
set statement_timeout = 50;
select pg_sleep(30);
create temp table ck (a int);
insert into ck select generate_series(1, 100);
alter table ck add check (pg_sleep(0.01) is not null);
reset statement_timeout;
select count(*) from generate_series(1, 3) g where pg_sleep(0.01) is not null;

-- case: errors_verbose
select * from nosuch_table;
select nosuch_col from (select 1 as a) s;
create table errs (id int primary key, v int not null);
insert into errs values (1, 1);
insert into errs values (1, 2);
insert into errs values (2, null);
insert into errs values ('x', 1);
select 1 +;
selec 1;
select count(*) from errs;

-- case: operator_error_positions
select 1 = true;
select 1 +  'a';
select (1) = true;
select ( 1 ) <> true;
select 'x'::text - 1;
select 2 * 3 = 'b';
select 1 + 2 + 'c';
select * from (select 1 as a) s where a
  = 'q';
select -true;
select - /* sign */ true;
select -'x';
select @ '1';
select |/ '16', @ '-2.5';
select -'1'::int;
select 1 = any (select true);
select (1 + 2) = true;
select ('a' || 'b') = 1;
select cast(1 as int) = true;
select (select 1 + 1) = true;
select 1 /* c */ = true;
select (2 - -1) * true;

-- case: constraints_defaults
create table cd (id int primary key, a int not null default 7, b text default 'dflt', c boolean default true);
insert into cd (id) values (1);
insert into cd values (2, 8, null, false);
insert into cd (id, a) values (3, default);
select * from cd order by id;
update cd set a = null where id = 1;

-- case: date_range_edges
select '5874897-12-31'::date;
select '5874898-01-01'::date;
select '5874897-12-31'::date + 1;
select '5874897-12-30'::date + 1;
select '4714-11-24 BC'::date;
select '4714-11-24 BC'::date - 1;
select '4714-11-23 BC'::date;
select '2020-13-01'::date;
select '99999999999'::int;
select 2147483647 + 1;
select '1e400'::float8;
select 32768::int2;
select '32768'::int2;
select 1 + '99999999999';
select '2021-02-30'::date;
select '2021-01-32'::date;
select '2021-00-10'::date;

-- case: numeric_sums_exact
-- sum and avg of numeric keep an exact running part while the inputs are small, and fold it
-- into the arbitrary-precision sum when an input is too large or too precise: the results and
-- their display scales are PostgreSQL's.
create table ns (g int, v numeric);
insert into ns select g % 3, (g * 7919 % 20000) / 100.0 from generate_series(1, 3000) g;
insert into ns values (0, 1), (0, 2.5), (0, -0.125), (1, null), (1, 12345678901234567890.5), (1, -12345678901234567890), (2, 0.000000000000000000000000000000000001), (2, 1e30), (2, 9223372036854775807), (2, 9223372036854775807), (2, 9223372036854775807);
select g, sum(v), avg(v), count(v) from ns group by g order by g;
select sum(v), avg(v) from ns;
select sum(x) from (values (1.0), (2), (3.50)) t(x);
select sum(x) from (values (0.1::numeric(10,1))) t(x) where false;
select sum(x), avg(x) from (select 99999999999999999.99::numeric x from generate_series(1, 100000)) s;
select sum(g::numeric * 1.5) from generate_series(1, 1000) g;
select sum(x) from (values ('NaN'::numeric), (1)) t(x);
select sum(x) from (values (9223372036854775807::numeric), (0.000000000000000000000000000001), (5)) t(x);
select sum(x) from (values (0.000000000000000000000000000001), (9223372036854775807::numeric), (-9223372036854775807::numeric)) t(x);

-- case: numeric_small_and_large
-- numeric values whose digits fit 64 bits are computed in machine integers and the others in
-- arbitrary precision; at the boundary, and when a result leaves the range, the values and
-- their display scales are PostgreSQL's.
select 9223372036854775807::numeric + 1, -9223372036854775808::numeric - 1, 9223372036854775807::numeric * 9223372036854775807;
select 922337203685477580.7 * 10, 92233720368547758.07 + 0.001, -0.5 - 9223372036854775807;
select 1.0 = 1.00, 1.5 < 1.50001, 10.0 > 9.99999999999999999999, 0.000 = -0.0, -1.5 < -1.49;
select round(2.5), round(-2.5), round(1.2345, 2), round(-1.2355, 3), trunc(-1.239, 2), round(12345.678, -2), round(0.5::numeric, 30);
select 123.456::numeric(5,2), (-0.005)::numeric(4,2) as b, 0.0001::numeric(3,0);
select 999.995::numeric(5,2);
select 1.50 * 2, 2 * 0.00, 7 / 2.0, 7 % 2.5, -7.5 % 2, abs(-12.30), -(0.00), 1e18 * 10, 1e-5 * 1e-5;
select x, x::float8, x::int8, x::text from (values (0.1), (-12345.678901), (9223372036854775.807), (-0.0000001)) t(x) order by 1;
select 1e25::numeric::int8;
select 9223372036854775807.5::numeric::int8;
select v, v * v, v + 0.1, -v from (values (3037000499.97605), (-3037000499.97605), (4611686018427387903.5)) t(v);
create table nk (v numeric(12,3) primary key);
insert into nk values (1), (1.5), (-2.25), (123456789.123), (0), (-0.001);
insert into nk values (1.000);
select v from nk order by v desc;
select * from nk where v = 1.5000 or v < -2;


-- case: order_by_output_names
-- ORDER BY a bare name means the output column of that name, aliased or not (a cast keeps its
-- operand's name); two output columns of that name with different expressions are ambiguous.
-- A cast of an expression without a name of its own is named after its type.
select x::text from (values (9), (10), (100)) t(x) order by x;
select x, x from (values (9), (10)) t(x) order by x desc;
select x + 1 as x from (values (9), (10)) t(x) order by x desc;
select a.x, b.x from (values (1)) a(x), (values (2)) b(x) order by x;
select (-1)::numeric(4,2), '1'::int::text, (1 + 2)::bigint, (select 1)::text, length('a')::text, case when true then 1 end::text, (select 1 as a)::text, (2)::numeric;

-- case: distinct_on_without_order_by
-- DISTINCT ON without ORDER BY returns its groups in the order of its expressions.
select distinct on (x) x, y from (values (3, 1), (1, 2), (2, 3), (1, 2), (null, 5)) t(x, y);
select distinct on (y, x) x::text from (values (3, 1), (1, 2), (2, 1), (1, 2)) t(x, y);
