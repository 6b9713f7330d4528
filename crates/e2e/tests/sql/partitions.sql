-- Declarative partitioning: hash, list and range partitions, routing bit-identical to
-- PostgreSQL's (rows counted per partition by querying the partitions themselves and by
-- tableoid::regclass), plan-time pruning in EXPLAIN, bound errors, upserts into a
-- partitioned table, TRUNCATE and DROP of the whole tree. Bound errors PostgreSQL places at
-- a position in the statement (overlaps, empty ranges, a bound of the wrong kind) are left
-- out: keel gives them without the position. Each "-- case:" block runs in its own psql
-- session on keel and on PostgreSQL 15 and the outputs must be identical.

-- case: hash_routing
create table pt_h (id int primary key, t text) partition by hash (id);
create table pt_h0 partition of pt_h for values with (modulus 4, remainder 0);
create table pt_h1 partition of pt_h for values with (modulus 4, remainder 1);
create table pt_h2 partition of pt_h for values with (modulus 4, remainder 2);
create table pt_h3 partition of pt_h for values with (modulus 4, remainder 3);
insert into pt_h select g, 'v' || g from generate_series(-500, 500) g;
select count(*), sum(id) from pt_h0;
select count(*), sum(id) from pt_h1;
select count(*), sum(id) from pt_h2;
select count(*), sum(id) from pt_h3;
select count(*), sum(id) from pt_h;
select * from pt_h where id = 17;
explain (costs off) select * from pt_h where id = 17;
explain (costs off) select count(*) from pt_h;
insert into pt_h values (17, 'again');
insert into pt_h values (17, 'up') on conflict (id) do update set t = pt_h.t || '+' || excluded.t returning *;
insert into pt_h values (9999, 'new') on conflict (id) do nothing returning *;
insert into pt_h values (9999, 'new') on conflict (id) do nothing returning *;
select * from pt_h2 where id in (17, 9999) order by id;
create table pt_h5 partition of pt_h for values with (modulus 3, remainder 1);
create table pt_h6 partition of pt_h for values with (modulus 4, remainder 4);
create table pt_h7 partition of pt_h default;
truncate pt_h;
select count(*) from pt_h;
select count(*) from pt_h1;

-- case: text_and_multicolumn_keys
create table pt_t (k text, v int) partition by hash (k);
create table pt_t0 partition of pt_t for values with (modulus 3, remainder 0);
create table pt_t1 partition of pt_t for values with (modulus 3, remainder 1);
create table pt_t2 partition of pt_t for values with (modulus 3, remainder 2);
insert into pt_t select md5(g::text), g from generate_series(1, 300) g;
insert into pt_t values (null, 0), ('', -1);
select count(*), sum(v) from pt_t0;
select count(*), sum(v) from pt_t1;
select count(*), sum(v) from pt_t2;
create table pt_m (a int, b text, c numeric) partition by hash (a, b);
create table pt_m0 partition of pt_m for values with (modulus 2, remainder 0);
create table pt_m1 partition of pt_m for values with (modulus 2, remainder 1);
insert into pt_m select g, 'x' || (g % 7), g / 3.0 from generate_series(1, 200) g;
insert into pt_m values (null, 'x'), (1, null), (null, null);
select count(*), sum(a) from pt_m0;
select count(*), sum(a) from pt_m1;
create table pt_n (c numeric) partition by hash (c);
create table pt_n0 partition of pt_n for values with (modulus 2, remainder 0);
create table pt_n1 partition of pt_n for values with (modulus 2, remainder 1);
insert into pt_n select g / 4.0 from generate_series(-40, 40) g;
select count(*), sum(c) from pt_n0;

-- case: range_and_list
create table pt_r (a int, b text) partition by range (a);
create table pt_r1 partition of pt_r for values from (1) to (10);
create table pt_r2 partition of pt_r for values from (10) to (20);
create table pt_rd partition of pt_r default;
insert into pt_r values (1, 'a'), (9, 'b'), (10, 'c'), (19, 'd'), (20, 'e'), (null, 'f');
select * from pt_r1 order by a;
select * from pt_r2 order by a;
select * from pt_rd order by a;
explain (costs off) select * from pt_r where a < 10;
explain (costs off) select * from pt_r where a >= 10 and a < 20;
create table pt_r5 partition of pt_r for values from (20) to (30);
create table pt_l (c text) partition by list (c);
create table pt_l1 partition of pt_l for values in ('a', 'b');
create table pt_l2 partition of pt_l for values in ('c', null);
insert into pt_l values ('a'), ('c'), (null);
insert into pt_l values ('z');
select * from pt_l2 order by c;
explain (costs off) select * from pt_l where c = 'b';
create table pt_y partition of nope for values in (1);
create table pt_plain (a int);
create table pt_z partition of pt_plain for values in (1);
create table pt_u (a int, b int, primary key (b)) partition by range (a);
drop table pt_r;
select count(*) from pt_r1;

-- UPDATE and DELETE through a partitioned table (row movement between partitions, the
-- partition constraint on a partition written directly, FOR UPDATE across partitions).
-- case: update_delete_partitioned
create table pu_r (a int primary key, b text) partition by range (a);
create table pu_r1 partition of pu_r for values from (minvalue) to (10);
create table pu_r2 partition of pu_r for values from (10) to (20);
create table pu_r3 partition of pu_r for values from (20) to (maxvalue);
insert into pu_r select g, 'v' || g from generate_series(1, 30) g;
update pu_r set b = b || '!' where a = 12 returning *;
update pu_r set a = a + 30 where a between 5 and 8 returning *;
update pu_r set a = a + 10 where a between 5 and 8 returning *;
select * from pu_r1 order by a;
select * from pu_r2 order by a;
select count(*) from pu_r3;
update pu_r set a = a - 20, b = 'moved' where a = 25 returning *;
select * from pu_r1 where a = 5;
update pu_r set a = 12 where a = 13;
delete from pu_r where a > 27 or a < 3 returning *;
select count(*), sum(a) from pu_r;
delete from pu_r2 where a = 11 returning a;
update pu_r2 set a = 1 where a = 12;
insert into pu_r2 values (50, 'x');
update pu_r1 set b = 'direct' where a = 4 returning *;
select * from pu_r where a = 4;
begin;
select * from pu_r where a in (4, 14, 24) order by a for update;
update pu_r set b = 'locked' where a in (4, 14, 24);
commit;
select * from pu_r where b = 'locked' order by a;
explain (costs off) update pu_r set b = 'e' where a = 12;
explain (costs off) delete from pu_r where a = 15;
explain (costs off) update pu_r set b = b where b = $$x$$;

-- case: update_hash_partitioned
create table pu_h (id int, k int, v text, primary key (id)) partition by hash (id);
create table pu_h0 partition of pu_h for values with (modulus 3, remainder 0);
create table pu_h1 partition of pu_h for values with (modulus 3, remainder 1);
create table pu_h2 partition of pu_h for values with (modulus 3, remainder 2);
insert into pu_h select g, g % 5, 'r' || g from generate_series(1, 60) g;
update pu_h set id = id + 1000 where k = 0;
select count(*), sum(id) from pu_h0;
select count(*), sum(id) from pu_h1;
select count(*), sum(id) from pu_h2;
update pu_h set v = 'k1' where k = 1;
select count(*) from pu_h where v = 'k1';
delete from pu_h where k = 2;
select count(*), sum(id) from pu_h;
update pu_h set id = 1 where id = 1003;
update pu_h set id = 2 where id = 1005 returning *;

-- case: tableoid_and_regclass
create table to_h (id int, k text) partition by hash (id);
create table to_h0 partition of to_h for values with (modulus 4, remainder 0);
create table to_h1 partition of to_h for values with (modulus 4, remainder 1);
create table to_h2 partition of to_h for values with (modulus 4, remainder 2);
create table to_h3 partition of to_h for values with (modulus 4, remainder 3);
insert into to_h select g, 'k' || g from generate_series(1, 1000) g;
select tableoid::regclass, count(*) from to_h group by 1 order by 1;
select tableoid::regclass as part, count(*) from to_h group by tableoid order by 2;
select to_h.tableoid::regclass, id from to_h where id < 5 order by id;
select tableoid::regclass::text, id from to_h where id = 7;
select count(*) from to_h where tableoid = 'to_h2'::regclass;
select pg_typeof(tableoid), pg_typeof(tableoid::regclass) from to_h limit 1;
create table to_p (a int);
insert into to_p values (1);
select tableoid::regclass, * from to_p;
select tableoid = 'to_p'::regclass from to_p;
select 'to_p'::regclass, 'to_h1'::regclass::oid = 'to_h1'::regclass;
select 'nosuch'::regclass;
select tableoid from to_p, to_h where id = 1;
select p.tableoid::regclass, h.tableoid::regclass from to_p p, to_h h where id = 1;
update to_h set k = 'u' where id = 3 returning tableoid::regclass, *;
update to_h set id = 1003 where id = 3 returning tableoid::regclass, *;
delete from to_h where id = 1003 returning tableoid::regclass;
create table to_r (a int, b int) partition by range (a);
create table to_r1 partition of to_r for values from (0) to (10) partition by list (b);
create table to_r1a partition of to_r1 for values in (1, 2);
create table to_r1b partition of to_r1 default;
create table to_r2 partition of to_r for values from (10) to (20);
insert into to_r values (1, 1), (2, 5), (15, 1), (3, null);
select tableoid::regclass, * from to_r order by a;
select * from to_r where tableoid::regclass::text like '%b' ;
select x.tableoid from (select * from to_p) x;

-- case: routing_by_key_type
-- (uuid keys wait for the uuid type.)
create table rk_i4 (k int4) partition by hash (k);
create table rk_i8 (k int8) partition by hash (k);
create table rk_tx (k text) partition by hash (k);
create table rk_nu (k numeric) partition by hash (k);
create table rk_two (a int4, b text) partition by hash (a, b);
do $$ begin
  for i in 0..31 loop
    execute format('create table rk_i4_%s partition of rk_i4 for values with (modulus 32, remainder %s)', i, i);
    execute format('create table rk_i8_%s partition of rk_i8 for values with (modulus 32, remainder %s)', i, i);
    execute format('create table rk_tx_%s partition of rk_tx for values with (modulus 32, remainder %s)', i, i);
    execute format('create table rk_nu_%s partition of rk_nu for values with (modulus 32, remainder %s)', i, i);
    execute format('create table rk_two_%s partition of rk_two for values with (modulus 32, remainder %s)', i, i);
  end loop;
end $$;
insert into rk_i4 select g * 7919 - 100000 from generate_series(1, 3000) g;
insert into rk_i8 select g::int8 * 104729 * 1000003 - (1::int8 << 40) from generate_series(1, 3000) g;
insert into rk_tx select md5(g::text) || repeat('x', g % 40) from generate_series(1, 3000) g;
insert into rk_nu select (g * 3.14159)::numeric(20, 5) - 4000 from generate_series(1, 3000) g;
insert into rk_two select g % 97, 'b' || (g % 61) from generate_series(1, 3000) g;
select tableoid::regclass, count(*), min(k), max(k) from rk_i4 group by 1 order by 1;
select tableoid::regclass, count(*), min(k), max(k) from rk_i8 group by 1 order by 1;
select tableoid::regclass, count(*), min(k) from rk_tx group by 1 order by 1;
select tableoid::regclass, count(*), min(k), max(k) from rk_nu group by 1 order by 1;
select tableoid::regclass, count(*) from rk_two group by 1 order by 1;
