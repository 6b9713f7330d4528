-- Join planning: inner-join blocks (pushdown, reordering, index nested loops, hash joins)
-- and correlated EXISTS / NOT EXISTS as semi- and anti-joins. Each "-- case:" block runs in
-- its own psql session on keel and on PostgreSQL 15 and the outputs must be identical.
-- Queries without ORDER BY are wrapped so their output does not depend on the join order.

-- case: join_block_three_tables
create table jc (id int primary key, name text, region int);
create table jo (id int primary key, cid int, day int, amount int);
create table jl (oid int, pid int, qty int);
create index jo_cid on jo (cid);
create index jl_oid on jl (oid);
insert into jc select g, 'c' || g, g % 7 from generate_series(1, 300) g;
insert into jo select g, g % 300 + 1, g % 30, g % 97 from generate_series(1, 3000) g;
insert into jo values (3001, null, 1, 5), (3002, 999, 1, 6);
insert into jl select g % 3002 + 1, g % 50, g % 5 from generate_series(1, 9000) g;
insert into jl values (null, 1, 1);
select o.id, c.name, o.amount from jo o join jc c on c.id = o.cid where o.id = 42;
select c.name, o.id, l.pid, l.qty from jl l join jo o on o.id = l.oid join jc c on c.id = o.cid where o.id = 17 order by 3, 4;
select count(*), sum(l.qty) from jc c, jo o, jl l where c.id = o.cid and l.oid = o.id and c.region = 3;
select c.region, count(*) from jo o join jc c on c.id = o.cid where o.day between 3 and 5 group by c.region order by 1;
select count(*) from jo o join jc c on o.cid = c.id and c.region < 2 where o.amount > 50;
select o.id from jo o join jc c on c.id = o.cid where c.id = 5 and o.amount > 10 order by o.id;
select * from jc c join jo o on o.cid = c.id where o.id in (1, 2, 3001, 3002) order by o.id;
select c.*, o.* from jo o, jc c where o.cid = c.id and o.id < 4 order by o.id;
select count(*) from jo a join jo b on a.cid = b.cid where a.id = 10;
select count(*) from jc a join jc b on a.region = b.region where a.id <= 10;
select count(*) from jc a, jc b where a.id < 3 and b.id < 4;
select o.id, c.name from jo o join jc c on c.id = o.cid + 0 where o.id between 100 and 103 order by 1;
select o.id, (select count(*) from jl l where l.oid = o.id) from jo o join jc c on c.id = o.cid where c.id = 9 order by 1;
select c.name from jc c join jo o on o.cid = c.id where o.id = 5 and (select 1) = 1;

-- case: join_mixed_outer
create table ma (id int primary key, b int);
create table mb (id int primary key, c int);
create table mc (id int primary key, v text);
insert into ma select g, g % 11 from generate_series(1, 50) g;
insert into mb select g, g % 5 from generate_series(0, 10) g;
insert into mc values (0, 'zero'), (1, 'one'), (2, 'two');
select ma.id, mb.id, mc.v from ma join mb on mb.id = ma.b left join mc on mc.id = mb.c where ma.id < 15 order by 1;
select ma.id, mc.v from ma left join mb on mb.id = ma.b join mc on mc.id = mb.c where ma.id < 15 order by 1;
select count(*) from ma join mb using (id) join mc using (id);

-- case: semi_anti_joins
create table sa (id int primary key, k int, t text);
create table sb (id int primary key, k int, flag bool);
insert into sa select g, case when g % 10 = 0 then null else g % 37 end, 't' || g from generate_series(1, 400) g;
insert into sb select g, case when g % 13 = 0 then null else g % 23 end, g % 3 = 0 from generate_series(1, 200) g;
select count(*) from sa a where exists (select 1 from sb b where b.k = a.k);
select count(*) from sa a where not exists (select 1 from sb b where b.k = a.k);
select count(*) from sa a where exists (select * from sb b where a.k = b.k and b.flag);
select count(*) from sa a where not exists (select 1 from sb b where b.k = a.k and b.id > 100) and a.id < 300;
select a.id from sa a where exists (select 1 from sb b where b.k = a.k and b.id = a.id) order by 1 limit 5;
select count(*) from sa a where exists (select 1 from sb b where b.k = a.k) and exists (select 1 from sb b where b.id = a.id);
select count(*) from sa a where exists (select 1 from sb b where b.k = a.k limit 1);
select count(*) from sa a where exists (select 1 from sb b where b.k > a.k);
select count(*) from sa a where a.k in (select k from sb);
select count(*) from sa a where a.k not in (select k from sb where k is not null);
select count(*) from sa a join sb b on b.id = a.id where not exists (select 1 from sb c where c.k = a.k);

-- case: index_nested_loop_probes_in_turn
-- One scan of the inner index is restarted for each outer row's key: rows before and after
-- a NULL key, a key with no match, repeated keys, and LEFT JOIN's NULL-extended rows.
create table inl_o (id int, k int);
insert into inl_o values (1, 5), (2, null), (3, 7), (4, 100000), (5, null), (6, 5), (7, 9);
create table inl_i (k int primary key, v text);
insert into inl_i select g, 'v' || g from generate_series(1, 50000) g;
analyze inl_o;
analyze inl_i;
select o.id, o.k, i.v from inl_o o join inl_i i on i.k = o.k order by o.id;
select o.id, o.k, i.v from inl_o o left join inl_i i on i.k = o.k order by o.id;
select o.id, i.v from inl_o o left join inl_i i on i.k = o.k and i.v like 'v5%' order by o.id;
select count(*) from inl_o a join inl_o b on b.id = a.id join inl_i i on i.k = b.k;

-- case: index_nested_loop_probes_across_leaves
-- The inner index is probed on a prefix of its key, so each probe restarts one range scan,
-- first on the leaf the last probe read: probes in key order (mostly that leaf), in
-- reverse, in scattered order, with keys absent from the index and with pages split between
-- statements.
create table inl2_i (a int, b int, v int, primary key (a, b));
insert into inl2_i select g / 3, g % 3, g from generate_series(0, 60000) g;
create table inl2_o (id int, k int);
insert into inl2_o select g, 500 + g * 2 from generate_series(1, 40) g;
insert into inl2_o select 40 + g, 600 + g * 97 from generate_series(1, 40) g;
insert into inl2_o select 5000 + g, 10000 - g * 101 from generate_series(1, 30) g;
insert into inl2_o select 8000 + g, (g * 7919) % 25000 from generate_series(1, 30) g;
insert into inl2_o values (20000, null), (20001, -5), (20002, 30000);
analyze inl2_i;
analyze inl2_o;
select count(*), sum(i.v), sum(o.id) from inl2_o o join inl2_i i on i.a = o.k;
select o.id, i.b, i.v from inl2_o o join inl2_i i on i.a = o.k where o.id in (1, 5001, 8001, 20001) order by 1, 2;
insert into inl2_i select 1000 + g % 50, 3 + g / 50, g from generate_series(0, 9999) g;
select count(*), sum(i.v), sum(o.id) from inl2_o o join inl2_i i on i.a = o.k;
select count(*), sum(i.v) from inl2_o o left join inl2_i i on i.a = o.k;

-- case: hash_join_probe_side_key_filter
-- An inner hash join on one integer key hands its keys to the probe side's scan, which skips
-- rows whose key none of them holds before decoding them. Outer joins keep every row of their
-- preserved side; NULL keys, bigint and date keys, and long runs of rows that all miss.
create table hk_small (id int, d date, big bigint, label text);
insert into hk_small select g * 50, date '2024-01-01' + g * 30, g::bigint * 5000000000, 'small ' || g from generate_series(1, 60) g;
insert into hk_small values (null, null, null, 'null keys');
create table hk_big (id int, d date, big bigint, payload text);
insert into hk_big select g, date '2024-01-01' + g, g::bigint * 100000000, repeat('x', g % 40) || g from generate_series(1, 20000) g;
insert into hk_big select null, null, null, 'null ' || g from generate_series(1, 300) g;
analyze hk_small;
analyze hk_big;
select count(*), sum(length(b.payload)), string_agg(s.label, ',' order by s.id) from hk_big b join hk_small s on s.id = b.id;
select count(*), count(s.label), sum(length(b.payload)) from hk_big b left join hk_small s on s.id = b.id;
select count(*), count(b.payload), count(s.label) from hk_big b right join hk_small s on s.id = b.id;
select count(*), count(b.payload), count(s.label) from hk_big b full join hk_small s on s.id = b.id;
select count(*), min(b.payload), max(s.label) from hk_big b join hk_small s on s.d = b.d;
select count(*), min(b.id), max(b.id) from hk_big b join hk_small s on s.big = b.big;
select count(*) from hk_big b join hk_small s on s.id = b.id and b.payload like 'x%';
select s.id, b.payload from hk_big b join hk_small s on s.id = b.id where s.id > 2900 order by 1;
