-- Triggers: CREATE / DROP TRIGGER and ALTER TABLE ... ENABLE | DISABLE TRIGGER with
-- PostgreSQL's errors; BEFORE ROW triggers that change or skip rows (INSERT, UPDATE, DELETE,
-- COPY), AFTER ROW triggers run at the end of the statement, statement triggers, WHEN and
-- UPDATE OF, TG_ variables and TG_ARGV, NEW/OLD as null rows where PostgreSQL has them,
-- triggers that write (recursively), errors with their CONTEXT lines, DROP FUNCTION of a
-- trigger's function. Each "-- case:" block runs in its own psql session on keel and on
-- PostgreSQL 15.

-- case: ddl_errors
create table trg_t0 (a int, b text);
create function trg_f0() returns trigger language plpgsql as $$ begin return new; end $$;
create function trg_nt0() returns int language plpgsql as $$ begin return 1; end $$;
create trigger x before insert on nosuch for each row execute function trg_f0();
create trigger x before insert on trg_t0 for each row execute function nosuch();
create trigger x before insert on trg_t0 for each row execute function trg_nt0();
create trigger x instead of insert on trg_t0 for each row execute function trg_f0();
create trigger x before update of zz on trg_t0 for each row execute function trg_f0();
create trigger x before insert on trg_t0 for each row execute function trg_f0();
create trigger x before insert on trg_t0 for each row execute function trg_f0();
create trigger x before truncate on trg_t0 for each statement execute function trg_f0();
drop trigger nosuch on trg_t0;
drop trigger if exists nosuch on trg_t0;
alter table trg_t0 disable trigger nosuch;
drop trigger x on nosuch;
drop function trg_f0();
select trg_f0();
create function trg_bad0(int) returns trigger language plpgsql as $$ begin return new; end $$;
create function trg_sql0() returns trigger language sql as 'select 1';

-- case: firing
create table trg_ev (id int primary key, payload text, n int default 0, created_at timestamptz, updated_at timestamptz);
create table trg_audit (seq serial, op text, tname text, old_id int, new_id int, info text);
create function trg_stamp() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    new.created_at := '2024-01-01 00:00:00+00';
  end if;
  new.updated_at := '2024-06-01 00:00:00+00';
  new.n := coalesce(new.n, 0) + 1;
  return new;
end $$;
create trigger ev_stamp before insert or update on trg_ev for each row execute function trg_stamp();
insert into trg_ev (id, payload) values (1, 'a'), (2, 'b');
select * from trg_ev order by id;
update trg_ev set payload = 'bb' where id = 2;
select * from trg_ev order by id;
create function trg_aud() returns trigger language plpgsql as $$
begin
  insert into trg_audit (op, tname, old_id, new_id, info)
  values (tg_op, tg_table_name, old.id, new.id, tg_when || ' ' || tg_level || ' ' || tg_nargs || ' ' || coalesce(tg_argv[0], '-') || ' ' || coalesce(tg_argv[1], '-'));
  return null;
end $$;
create trigger ev_aud after insert or update or delete on trg_ev for each row execute function trg_aud('x', 'y');
create function trg_aud_stmt() returns trigger language plpgsql as $$
begin
  insert into trg_audit (op, tname, info) values (tg_op, tg_table_name, tg_when || ' ' || tg_level);
  return null;
end $$;
create trigger ev_stmt_b before delete on trg_ev for each statement execute function trg_aud_stmt();
create trigger ev_stmt_a after delete on trg_ev for each statement execute function trg_aud_stmt();
insert into trg_ev (id, payload) values (3, 'c');
update trg_ev set payload = 'cc' where id = 3;
delete from trg_ev where id = 1;
delete from trg_ev where id = 99;
select seq, op, tname, old_id, new_id, info from trg_audit order by seq;
create function trg_skip_odd() returns trigger language plpgsql as $$
begin
  if new.id % 2 = 1 then
    raise notice 'skipping %', new.id;
    return null;
  end if;
  return new;
end $$;
create trigger a_skip before insert on trg_ev for each row execute function trg_skip_odd();
insert into trg_ev (id, payload) values (5, 'e'), (6, 'f'), (7, 'g');
select id, payload, n from trg_ev order by id;
create function trg_no_delete() returns trigger language plpgsql as $$
begin
  if old.payload = 'keep' then return null; end if;
  return old;
end $$;
create trigger keep_rows before delete on trg_ev for each row execute function trg_no_delete();
update trg_ev set payload = 'keep' where id = 6;
delete from trg_ev;
select id, payload from trg_ev order by id;
alter table trg_ev disable trigger keep_rows;
delete from trg_ev where id = 6;
select count(*) from trg_ev;
alter table trg_ev enable trigger all;
create trigger upd_of before update of payload on trg_ev for each row when (old.payload is distinct from new.payload) execute function trg_skip_odd();
insert into trg_ev (id, payload) values (8, 'h');
update trg_ev set n = 100 where id = 8;
select id, payload, n from trg_ev order by id;
drop trigger upd_of on trg_ev;
drop trigger if exists upd_of on trg_ev;
create function trg_bad_ret() returns trigger language plpgsql as $$ begin new.id := 1; end $$;
create trigger z_bad before insert on trg_ev for each row execute function trg_bad_ret();
insert into trg_ev (id) values (10);
drop trigger z_bad on trg_ev;
create function trg_raise_it() returns trigger language plpgsql as $$ begin raise exception 'no % on %', tg_op, tg_table_name; end $$;
create trigger z_raise after insert on trg_ev for each row execute function trg_raise_it();
insert into trg_ev (id) values (12);
select count(*) from trg_ev where id = 12;
drop function trg_raise_it();
drop function trg_raise_it() cascade;
insert into trg_ev (id, payload) values (12, 'ok');
create function trg_bad_field() returns trigger language plpgsql as $$ begin new.nosuch := 1; return new; end $$;
create trigger z_field before insert on trg_ev for each row execute function trg_bad_field();
insert into trg_ev (id) values (14);
select trg_stamp();

-- case: writes_copy_constraints
create table trg_r (id int primary key, depth int);
create function trg_r_more() returns trigger language plpgsql as $$
begin
  if new.depth < 5 then
    insert into trg_r values (new.id + 1, new.depth + 1);
  end if;
  return new;
end $$;
create trigger trg_r_more after insert on trg_r for each row execute function trg_r_more();
insert into trg_r values (1, 0);
select * from trg_r order by id;
create table trg_inf (id int);
create function trg_inf_more() returns trigger language plpgsql as $$
begin
  insert into trg_inf values (new.id + 1);
  return new;
end $$;
create trigger trg_inf_more before insert on trg_inf for each row execute function trg_inf_more();
\set VERBOSITY terse
insert into trg_inf values (1);
\set VERBOSITY default
select count(*) from trg_inf;
create table trg_cp (a int, b text, c int);
create function trg_cp_fill() returns trigger language plpgsql as $$ begin new.c := length(new.b); return new; end $$;
create trigger trg_cp_fill before insert on trg_cp for each row execute function trg_cp_fill();
copy trg_cp (a, b) from stdin;
1	hello
2	hi
\.
select * from trg_cp order by a;
create table trg_vc (id int, name varchar(5));
create function trg_vc_t() returns trigger language plpgsql as $$ begin new.name := new.name || 'xxxxxx'; return new; end $$;
create trigger trg_vc_t before insert on trg_vc for each row execute function trg_vc_t();
insert into trg_vc values (1, 'ab');
create table trg_nn (id int not null, v int check (v > 0));
create function trg_nn_t() returns trigger language plpgsql as $$ begin new.v := -1; return new; end $$;
create trigger trg_nn_t before insert on trg_nn for each row execute function trg_nn_t();
insert into trg_nn values (1, 5);
begin;
create table trg_tx (id int);
create function trg_tx_t() returns trigger language plpgsql as $$ begin raise notice 'fired %', new.id; return new; end $$;
create trigger trg_tx_t before insert on trg_tx for each row execute function trg_tx_t();
insert into trg_tx values (1);
rollback;
insert into trg_tx values (2);

-- case: session_replication_role
create table rr (i int default 1);
create function rrf() returns trigger language plpgsql as $$ begin raise notice '% % %', tg_name, tg_op, tg_when; return new; end $$;
create trigger rr_a after insert on rr for each statement execute procedure rrf();
create trigger rr_b before insert on rr for each row execute procedure rrf();
insert into rr default values;
set session_replication_role = replica;
insert into rr default values;
alter table rr enable always trigger rr_a;
insert into rr default values;
alter table rr enable replica trigger rr_b;
insert into rr default values;
reset session_replication_role;
insert into rr default values;
set session_replication_role = local;
insert into rr default values;
set session_replication_role = bogus;
show session_replication_role;
reset session_replication_role;
create table rrp (i int primary key);
create table rrc (i int references rrp);
set session_replication_role = replica;
insert into rrc values (5);
reset session_replication_role;
insert into rrc values (6);
select * from rrc;

-- case: pg_trigger_depth
select pg_trigger_depth();
create table td_t (i int);
create function td_f() returns trigger language plpgsql as $$
begin
  raise notice 'depth % for %', pg_trigger_depth(), new.i;
  if new.i < 3 then insert into td_t values (new.i + 1); end if;
  return new;
end $$;
create trigger td_tr before insert on td_t for each row execute procedure td_f();
insert into td_t values (1);
select pg_trigger_depth(), count(*) from td_t;

-- case: into_record_field
-- SELECT ... INTO a field of NEW, in an INSTEAD OF trigger of a view; a record without the
-- field, and a field of a record that is not yet assigned, fail as PostgreSQL's do.
create table trg_country (id serial primary key, name text unique, continent text);
insert into trg_country (name, continent) values ('UK', 'Europe'), ('USA', 'North America');
create table trg_city (id serial primary key, name text, country_id int);
create view trg_city_view as
  select c.id, c.name, k.name as country, k.continent
  from trg_city c left join trg_country k on k.id = c.country_id;
create function trg_city_ins() returns trigger language plpgsql as $$
declare cid int;
begin
  select id, continent into cid, new.continent from trg_country where name = new.country;
  insert into trg_city (name, country_id) values (new.name, cid) returning id into new.id;
  return new;
end $$;
create trigger trg_city_ins instead of insert on trg_city_view
  for each row execute function trg_city_ins();
insert into trg_city_view (name, country) values ('London', 'UK') returning *;
insert into trg_city_view (name, country) values ('Nowhere', 'Atlantis') returning *;
select * from trg_city_view order by id;
do $$ declare r record; begin select 1 as a into r; select 2 into r.b; end $$;
do $$ declare r record; begin select 2 into r.a; end $$;
do $$ declare r record; x int; begin select 1 as a into r; select 5, 6 into x, r.a; raise notice '% %', x, r.a; end $$;
