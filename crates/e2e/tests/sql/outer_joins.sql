-- Outer-join planning: WHERE conjuncts over the preserved side pushed below the join, ON
-- conjuncts over the nullable side pushed into it, LEFT joins turned into inner joins by a
-- strict WHERE condition, the hashed side chosen by size (Hash Right Join), and constants
-- propagated through equalities of an inner-join block. NULL keys, unmatched rows on both
-- sides, and IS NULL tests on the nullable side. Each "-- case:" block runs on keel and on
-- PostgreSQL 15 and the outputs must be identical.

-- case: outer_join_placement
create table oc (id int primary key, city text, score int);
create table oo (id int primary key, cid int, status text, amount int);
create index oo_cid on oo (cid);
insert into oc select g, 'city ' || (g % 5), g % 4 from generate_series(1, 60) g;
insert into oc values (61, null, null), (62, 'city 1', null);
insert into oo select g, g % 1000 + 1, case when g % 3 = 0 then 'open' else 'shipped' end, g % 13
  from generate_series(1, 4000) g;
insert into oo values (4001, null, 'open', 1), (4002, 62, null, null), (4003, 999, 'open', 2);
-- Before ANALYZE both tables look alike: the nullable side is hashed (Hash Left Join).
select c.id, count(o.id) from oc c left join oo o on o.cid = c.id group by c.id order by c.id;
select c.id from oc c left join oo o on o.cid = c.id where o.id is null order by 1;
analyze oc;
analyze oo;
-- The big side probes, the small side is hashed; unmatched small-side rows come out at the end.
select c.id, count(o.id) from oc c left join oo o on o.cid = c.id group by c.id order by c.id;
select c.id from oc c left join oo o on o.cid = c.id where o.id is null order by 1;
select c.id, o.id from oc c left join oo o on o.cid = c.id and o.status = 'open'
  where c.city = 'city 3' order by 1, 2;
select c.id, o.id, o.status from oc c left join oo o on o.cid = c.id and o.status is null
  order by 1, 2;
select c.id, o.id from oc c left join oo o on o.cid = c.id where c.id < 4 order by 1, 2;
select c.id, o.id from oc c left join oo o on o.cid = c.id and c.score = 1
  where c.id between 1 and 8 order by 1, 2;
-- RIGHT JOIN: the preserved side is the right one.
select c.id, o.id from oo o right join oc c on o.cid = c.id where c.id > 58 order by 1, 2;
select o.id, c.id from oc c right join oo o on o.cid = c.id and c.city = 'city 2'
  where o.id > 3995 order by 1, 2;
-- A strict WHERE condition on the nullable side: an inner join.
select c.id, o.amount from oc c left join oo o on o.cid = c.id where o.amount > 11 and c.id < 20
  order by 1, 2;
select count(*) from oc c left join oo o on o.cid = c.id where o.status = 'open';
select count(*) from oc c left join oo o on o.cid = c.id where o.status is not null;
-- Not strict: the NULL-extended rows stay.
select count(*) from oc c left join oo o on o.cid = c.id where o.status is null;
select count(*) from oc c left join oo o on o.cid = c.id where coalesce(o.amount, 0) = 0;
select count(*) from oc c left join oo o on o.cid = c.id where o.amount > 11 or c.score is null;
-- NULL join keys on either side match nothing.
select c.id, o.id from oc c left join oo o on o.cid = c.id where c.city is null order by 1, 2;
select count(*), count(o.id), count(c.id) from oo o left join oc c on c.id = o.cid;
-- Nested outer joins.
select c.id, o.id, o2.id from oc c left join oo o on o.cid = c.id
  left join oo o2 on o2.id = o.id + 1 where c.id in (1, 61, 62) order by 1, 2, 3;
select count(*) from oc c left join (oo o join oc c2 on c2.id = o.cid) on o.cid = c.id
  where c2.score = 2;
select c.id, o.id from oc c full join oo o on o.cid = c.id where c.id is null or o.id is null
  order by 1, 2;

-- Few preserved rows: a nested loop probing oo_cid per row (NULL-extended when none joins).
select c.id, o.id, o.status from oc c left join oo o on o.cid = c.id and o.status = 'open'
  where c.id in (3, 61, 62) order by 1, 2;
select c.id, o.id from oc c left join oo o on o.cid = c.id and o.amount > c.score * 4
  where c.id <= 3 order by 1, 2;
select c.id, o.id from oo o right join oc c on c.id = o.cid where c.id between 60 and 62
  order by 1, 2;
select c.id, o.id from oc c left join oo o on o.cid = c.id + 100 where c.id < 3 order by 1, 2;

-- case: equivalence_constants
create table ea (id int primary key, name text);
create table eb (id int primary key, aid int, v int);
create table ec (bid int, n int, pid int);
create index eb_aid on eb (aid);
insert into ea select g, 'a' || g from generate_series(1, 100) g;
insert into eb select g, g % 100 + 1, g from generate_series(1, 500) g;
insert into eb values (501, null, 0);
insert into ec select g % 501 + 1, g % 3, g % 100 + 1 from generate_series(1, 1500) g;
insert into ec values (null, 1, 1);
analyze ea;
analyze eb;
analyze ec;
select a.name, b.id from ea a join eb b on b.aid = a.id where a.id = 10 order by 2;
select b.id, c.n, a.name from eb b join ec c on c.bid = b.id join ea a on a.id = c.pid
  where b.id = 50 order by 2, 3;
select count(*) from ea a join eb b on b.aid = a.id where a.id = 10 and b.aid = 11;
select count(*) from ea a join eb b on b.aid = a.id where a.id = 10 and b.aid = 10;
select count(*) from ea a join eb b on b.aid = a.id where b.aid = 7;
select count(*) from ea a, eb b, ec c where a.id = b.aid and b.aid = c.pid and c.pid = 3;
select count(*) from ea a join eb b on b.aid = a.id where a.id = null;
select count(*) from ea a left join eb b on b.aid = a.id where a.id = 10;
