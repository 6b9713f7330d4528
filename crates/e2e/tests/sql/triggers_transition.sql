-- Transition tables (CREATE TRIGGER ... REFERENCING OLD TABLE AS o NEW TABLE AS n) and
-- TRUNCATE triggers: PostgreSQL's CREATE-time checks; statement and row triggers reading
-- the whole statement's rows by name, joined, aggregated, read twice, from EXECUTE and
-- EXPLAIN; names that only the trigger's own function sees; rows past work_mem; TRUNCATE's
-- BEFORE and AFTER statement triggers. Each "-- case:" block runs in its own psql session on
-- keel and on PostgreSQL 15.

-- case: transition_ddl_errors
create table tt_e (a int, b text);
create view tt_ev as select * from tt_e;
create function tt_ef() returns trigger language plpgsql as $$ begin return null; end $$;
create trigger x before insert on tt_e referencing new table as n for each statement execute function tt_ef();
create trigger x after insert on tt_e referencing old table as o for each statement execute function tt_ef();
create trigger x after delete on tt_e referencing new table as n for each statement execute function tt_ef();
create trigger x after update on tt_e referencing new table as n old table as n for each statement execute function tt_ef();
create trigger x after update on tt_e referencing new table as n new table as m for each statement execute function tt_ef();
create trigger x after update on tt_e referencing old table as n old table as m for each statement execute function tt_ef();
create trigger x after truncate on tt_e referencing old table as o for each statement execute function tt_ef();
create trigger x after insert or update on tt_e referencing new table as n for each statement execute function tt_ef();
create trigger x after update of a on tt_e referencing new table as n for each statement execute function tt_ef();
create trigger x after insert on tt_ev referencing new table as n for each statement execute function tt_ef();
create trigger x after truncate on tt_e for each row execute function tt_ef();
create trigger x after truncate on tt_ev execute function tt_ef();
create trigger x after update on tt_e referencing old table as o new table as n for each row execute function tt_ef();
create table without_oids_t (a int) without oids;
insert into without_oids_t values (1);
select * from without_oids_t;

-- case: transition_statement_triggers
create table tt_s (id int primary key, val text);
create function tt_ins() returns trigger language plpgsql as $$
begin
  raise notice '% %: % rows, ids %', tg_name, tg_op, (select count(*) from nt),
    (select string_agg(id::text, ',' order by id) from nt);
  return null;
end $$;
create function tt_upd() returns trigger language plpgsql as $$
declare r record;
begin
  for r in select o.id, o.val as before, n.val as after
           from ot o join nt n using (id) order by id loop
    raise notice '% %: % -> %', tg_name, r.id, r.before, r.after;
  end loop;
  raise notice 'pairs %', (select count(*) from nt a, nt b);
  return null;
end $$;
create function tt_del() returns trigger language plpgsql as $$
begin
  raise notice '% deleted %', tg_name, (select string_agg(val, ',' order by id) from ot);
  return null;
end $$;
create trigger tt_s_ins after insert on tt_s referencing new table as nt
  for each statement execute function tt_ins();
create trigger tt_s_upd after update on tt_s referencing old table as ot new table as nt
  for each statement execute function tt_upd();
create trigger tt_s_del after delete on tt_s referencing old table as ot
  for each statement execute function tt_del();
insert into tt_s values (1, 'one'), (2, 'two'), (3, 'three');
insert into tt_s select 4, 'four' where false;
update tt_s set val = upper(val) where id >= 2;
update tt_s set val = val where false;
delete from tt_s where id <> 2;
select * from tt_s order by id;
-- A BEFORE ROW trigger's changes are what the transition table holds.
create function tt_bump() returns trigger language plpgsql as $$
begin new.val := new.val || '!'; return new; end $$;
create trigger tt_s_bump before insert on tt_s for each row execute function tt_bump();
insert into tt_s values (7, 'seven'), (8, 'eight');
select * from tt_s order by id;

-- case: transition_row_triggers_and_scope
create table tt_r (a int, b text);
create table tt_log (msg text);
-- A row trigger sees the statement's whole transition table, at each row.
create function tt_row() returns trigger language plpgsql as $$
begin
  raise notice 'row % of %', new.a, (select count(*) from nt);
  return null;
end $$;
create trigger tt_r_row after insert on tt_r referencing new table as nt
  for each row execute function tt_row();
insert into tt_r values (1, 'x'), (2, 'y');
-- The names are the trigger's function's alone: a function it calls does not see them,
-- and a statement cannot write to them.
create function tt_peek() returns bigint language plpgsql as $$
begin return (select count(*) from nt); end $$;
create function tt_calls() returns trigger language plpgsql as $$
begin perform tt_peek(); return null; end $$;
create trigger tt_r_calls after update on tt_r referencing new table as nt
  for each statement execute function tt_calls();
update tt_r set b = 'z';
drop trigger tt_r_calls on tt_r;
create function tt_writes() returns trigger language plpgsql as $$
begin insert into nt values (9, 'w'); return null; end $$;
create trigger tt_r_writes after delete on tt_r referencing old table as nt
  for each statement execute function tt_writes();
delete from tt_r where a = 1;
drop trigger tt_r_writes on tt_r;
select * from nt;
-- One function behind two triggers with different names for the rows; EXECUTE and a
-- nested trigger (on tt_log, without transition tables) inside.
create function tt_dyn() returns trigger language plpgsql as $$
declare n bigint;
begin
  execute format('select count(*) from %I', tg_argv[0]) into n;
  insert into tt_log values (tg_name || ': ' || n);
  return null;
end $$;
create trigger tt_r_dyn1 after insert on tt_r referencing new table as first_rows
  for each statement execute function tt_dyn('first_rows');
create trigger tt_r_dyn2 after delete on tt_r referencing old table as gone
  for each statement execute function tt_dyn('gone');
create function tt_log_seen() returns trigger language plpgsql as $$
begin raise notice 'logged %', new.msg; return new; end $$;
create trigger tt_log_seen before insert on tt_log for each row execute function tt_log_seen();
insert into tt_r select g, 'g' from generate_series(10, 14) g;
delete from tt_r where a >= 12;
select * from tt_log order by msg;

-- case: transition_explain
create table tt_x (id int, val text);
create function tt_x_explain() returns trigger language plpgsql as $$
declare r record;
begin
  for r in execute 'explain (costs off, verbose) select * from ot o full join nt n using (id)'
  loop
    raise info '%', r."QUERY PLAN";
  end loop;
  return null;
end $$;
create trigger tt_x_upd after update on tt_x referencing old table as ot new table as nt
  for each statement execute function tt_x_explain();
insert into tt_x values (1, 'a'), (2, 'b');
update tt_x set val = val || val;

-- case: transition_rows_past_work_mem
set work_mem = '64kB';
create table tt_big (id int, pad text);
create function tt_big_sum() returns trigger language plpgsql as $$
begin
  raise notice 'old % new % changed %',
    (select sum(id) from ot), (select sum(id) from nt),
    (select count(*) from ot join nt using (id) where ot.pad <> nt.pad);
  return null;
end $$;
insert into tt_big select g, repeat('x', 40) from generate_series(1, 5000) g;
create trigger tt_big_upd after update on tt_big referencing old table as ot new table as nt
  for each statement execute function tt_big_sum();
update tt_big set pad = repeat('y', 40) where id % 2 = 0;

-- case: truncate_triggers
create table tr_a (a int);
create table tr_b (b int);
create table tr_log (event text);
insert into tr_a values (1), (2);
insert into tr_b values (3);
create function tr_note() returns trigger language plpgsql as $$
begin
  insert into tr_log values (tg_name || ' ' || tg_when || ' ' || tg_op || ' ' || tg_level
    || ' on ' || tg_table_name || ' sees '
    || (select count(*) from tr_a) || '/' || (select count(*) from tr_b));
  return null;
end $$;
create trigger tr_a_before before truncate on tr_a execute function tr_note();
create trigger tr_a_after after truncate on tr_a for each statement execute function tr_note();
create trigger tr_b_after after truncate on tr_b execute function tr_note();
truncate tr_a, tr_b;
select * from tr_log order by event;
alter table tr_a disable trigger tr_a_before;
insert into tr_a values (5);
truncate tr_a;
select count(*) from tr_log;
-- A BEFORE TRUNCATE trigger that fails keeps the rows.
create function tr_refuse() returns trigger language plpgsql as $$
begin raise exception 'no truncating %', tg_table_name; end $$;
create trigger tr_b_refuse before truncate on tr_b execute function tr_refuse();
insert into tr_b values (4);
truncate tr_b;
select * from tr_b;
begin;
truncate tr_a;
rollback;
drop trigger tr_b_refuse on tr_b;
truncate tr_b;
select count(*) from tr_b;
