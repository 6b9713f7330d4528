-- SQL-level prepared statements (PREPARE, EXECUTE, EXPLAIN EXECUTE, DEALLOCATE) and
-- partition pruning of OR-ed and `= ANY (array)` conditions, at plan time and when a
-- prepared statement starts. EXPLAIN EXECUTE runs under plan_cache_mode =
-- force_generic_plan on both engines: keel runs a prepared statement's one plan always,
-- which is PostgreSQL's generic plan (its custom plans show the parameters as constants).

-- case: prepare_execute
prepare pp_q1 (int, text) as select $1 + 1 as n, upper($2) as t;
execute pp_q1 (41, 'x');
execute pp_q1 ('1', 'y');
execute pp_q1 (1);
execute pp_q1 (1, 'a', 3);
execute pp_q1 ('a', 'b');
execute pp_nope (1);
prepare pp_q1 as select 1;
prepare pp_q2 as select $1::int * 2;
execute pp_q2 (21);
prepare pp_q3 (int, text) as select $1, $2, $3;
execute pp_q3 (1, 'b', 'c');
create table pp_t (a int primary key, b text);
prepare pp_ins (int, text) as insert into pp_t values ($1, $2) returning a, b;
execute pp_ins (1, 'one');
execute pp_ins (2, 'two');
execute pp_ins (1, 'dup');
prepare pp_upd (int) as update pp_t set b = b || '!' where a = $1;
execute pp_upd (2);
prepare pp_sel as select * from pp_t order by a;
execute pp_sel;
alter table pp_t add column c int;
execute pp_sel;
prepare pp_bad as create table pp_zz (a int);
prepare pp_badtype (nosuchtype) as select 1;
prepare pp_v (int) as values ($1, $1 * 2);
execute pp_v (3);
deallocate pp_v;
deallocate pp_v;
deallocate prepare pp_q2;
deallocate all;
execute pp_sel;
begin;
prepare pp_in_txn as select 1;
rollback;
execute pp_in_txn;
prepare pp_plus (int) as select $1 + 1;
do $$ declare r int; begin execute 'execute pp_plus (1)' into r; raise notice 'r = %', r; end $$;
do $$ begin execute 'execute pp_nope (1)'; end $$;

-- case: explain_execute_pruning
set plan_cache_mode = force_generic_plan;
create table pp_l (a int, b text) partition by list (a);
create table pp_l1 partition of pp_l for values in (1, 2);
create table pp_l3 partition of pp_l for values in (3, 4);
create table pp_l5 partition of pp_l for values in (5, 6);
create table pp_ld partition of pp_l default;
insert into pp_l select g % 9, 'r' || g from generate_series(1, 90) g;
prepare pp_one (int) as select count(*) from pp_l where a = $1;
explain (costs off) execute pp_one (1);
explain (costs off) execute pp_one (7);
execute pp_one (1);
execute pp_one (7);
explain (analyze, costs off, timing off, summary off) execute pp_one (3);
explain (costs off, format json) execute pp_one (5);
prepare pp_or (int, int) as select * from pp_l where a = $1 or a = $2 order by b limit 3;
explain (costs off) execute pp_or (1, 5);
execute pp_or (1, 5);
prepare pp_upd (int) as update pp_l set b = b || '.' where a = $1;
execute pp_upd (3);
select count(*) from pp_l where b like '%.';
show plan_cache_mode;
reset plan_cache_mode;

-- case: or_any_pruning
create table pp_h (a int, b text) partition by hash (a);
create table pp_h0 partition of pp_h for values with (modulus 4, remainder 0);
create table pp_h1 partition of pp_h for values with (modulus 4, remainder 1);
create table pp_h2 partition of pp_h for values with (modulus 4, remainder 2);
create table pp_h3 partition of pp_h for values with (modulus 4, remainder 3);
insert into pp_h select g, 'h' || g from generate_series(1, 40) g;
explain (costs off) select * from pp_h where a = 1 or a = 2;
explain (costs off) select * from pp_h where a = any (array[1, 2]);
explain (costs off) select * from pp_h where a = 1 or b = 'x';
explain (costs off) select * from pp_h where (a = 1 and b = 'h1') or a = 3;
explain (costs off) select * from pp_h where a = any ('{}'::int[]);
select tableoid::regclass, a from pp_h where a = 1 or a = 2 or a = 7 order by a;
select count(*) from pp_h where a = any (array[1, 2, null]);
create table pp_r (a int) partition by range (a);
create table pp_r1 partition of pp_r for values from (0) to (10);
create table pp_r2 partition of pp_r for values from (10) to (20);
create table pp_r3 partition of pp_r for values from (20) to (30);
explain (costs off) select * from pp_r where a < 5 or a >= 25;
explain (costs off) select * from pp_r where a < 5 or (a > 12 and a < 14);
