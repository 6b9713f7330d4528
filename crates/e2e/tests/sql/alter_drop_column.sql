-- ALTER TABLE ... DROP COLUMN: the table is rewritten without the column; indexes and
-- CHECK constraints on it go, the rest are rebuilt; triggers of UPDATE OF it refuse the
-- drop unless CASCADE. Each "-- case:" block runs in its own psql session on keel and on
-- PostgreSQL 15 and the outputs must be identical.

-- case: rewrite_and_indexes
create table dc (a int primary key, b text, c int check (c >= 0), d int default 5);
create index dc_c on dc(c);
create index dc_bc on dc(b, c);
create table dc_b_check (x int, y int check (y > 0), z int);
insert into dc select i, 'x'||i, i*10 from generate_series(1,1000) i;
alter table dc drop column b;
select * from dc where a < 4 order by a;
select * from dc where c = 50;
select count(*) from dc;
insert into dc values (2000, 7);
insert into dc values (2001, -1);
select * from dc where a = 2000;
alter table dc drop column nope;
alter table dc drop column if exists nope;
alter table dc add column e text;
update dc set e = 'z' where a = 1;
select * from dc where a in (1,2) order by a;
alter table dc drop column c;
insert into dc values (3000, -1);
select * from dc where a = 3000;
alter table dc drop column a;
select count(*) from dc;
begin;
alter table dc drop column d;
select * from dc limit 1;
rollback;
select d, count(*) from dc group by d order by d;

-- case: owned_sequence_and_references
create table p (id serial primary key, v text);
insert into p (v) values ('a'), ('b');
create table ch (pid int references p(id), w int);
alter table p drop column id;
alter table ch drop column pid;
alter table p drop column id;
select * from p order by v;
insert into p values ('c');
select * from p order by v;

-- case: triggers_on_the_column
create table tt (a int, b int);
create function tt_note() returns trigger language plpgsql as $$
begin raise notice '% %', tg_name, tg_op; return new; end $$;
create trigger t_b_row after update of b on tt for each row execute function tt_note();
create trigger t_a_row after update of a on tt for each row execute function tt_note();
create trigger t_ab_stmt after update of a, b on tt for each statement execute function tt_note();
insert into tt values (1, 2);
alter table tt drop column b;
alter table tt drop column b cascade;
update tt set a = 5;
select * from tt;
