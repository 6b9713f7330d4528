-- SELECT ... FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE in one session: the plans
-- (LockRows below LIMIT), the rows locked, and the statements PostgreSQL refuses.

-- case: locking_plans_and_rows
create table jobs (id int primary key, state text, payload text);
insert into jobs select g, case when g % 3 = 0 then 'done' else 'new' end, 'p' || g
  from generate_series(1, 20000) g;
create index jobs_state on jobs (state);
analyze jobs;
explain (costs off) select * from jobs where state = 'new' order by id limit 1 for update skip locked;
explain (costs off) select id from jobs where id = 3 for no key update;
explain (costs off) select id from jobs where id between 10 and 20 for share;
begin;
select * from jobs where state = 'new' order by id limit 2 for update skip locked;
select id, state from jobs where id <= 3 order by id for share;
select id from jobs where id = 5 for key share;
select id from jobs where id = 6 for no key update nowait;
update jobs set state = 'taken' where id = 1;
select * from jobs where id = 1 for update;
select id from jobs where id in (1, 2) order by id for update of jobs;
select j.id from jobs j where j.id = 7 for update of j;
commit;
select id, state from jobs order by id limit 3;
begin;
savepoint a;
select id from jobs where id = 2 for update;
rollback to a;
select id from jobs where id = 2 for update;
commit;
drop table jobs;

-- case: locking_refused
create table lk (id int primary key, v int);
insert into lk values (1, 1), (2, 2);
select count(*) from lk for update;
select distinct v from lk for share;
select v from lk group by v for update;
select id from lk union select id from lk for update;
select * from lk for update of x;
select * from lk j for update of lk;
begin read only;
select * from lk for update;
rollback;
begin read only;
select * from lk for no key update;
rollback;
begin read only;
select * from lk for key share;
rollback;
drop table lk;
