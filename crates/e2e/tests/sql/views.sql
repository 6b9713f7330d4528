-- Views: CREATE [OR REPLACE] VIEW and DROP VIEW with PostgreSQL's errors; views in FROM
-- (with WHERE, joins, aggregates, views of views, a SELECT * that a later ADD COLUMN does
-- not widen); dependencies that DROP TABLE / DROP VIEW respect, with CASCADE's notices;
-- INSTEAD OF triggers and statement triggers on views; writes through automatically
-- updatable views (read-only columns, the view's WHERE, RETURNING, the base table's
-- defaults and triggers) and PostgreSQL's errors for views that are not updatable. Each
-- "-- case:" block runs in its own psql session on keel and on PostgreSQL 15.

-- case: define_and_read
create table vw_t (a int primary key, b text, c int);
insert into vw_t values (1, 'one', 10), (2, 'two', 20), (3, 'three', 30), (4, null, 40);
create view vw_v as select a, b from vw_t where c > 15;
select * from vw_v order by a;
select b from vw_v where a = 3;
select count(*), max(a) from vw_v;
create view vw_v2 (x, y) as select a, b from vw_t;
select * from vw_v2 order by x;
select v.a, w.y from vw_v v join vw_v2 w on w.x = v.a order by 1;
select * from vw_v2 w where w.x in (select a from vw_v) order by 1;
create view vw_vv as select a * 2 as a2, b from vw_v where a < 4;
select * from vw_vv order by a2;
create view vw_lit as select 'foo' as s, 1 + 1, null as n;
select * from vw_lit;
create view vw_star as select * from vw_t;
alter table vw_t add column d int;
select * from vw_star order by a;
select * from vw_t order by a;
with vw_v as (select 42 as a) select * from vw_v;
select * from vw_v where a = (select max(a) from vw_v);

-- case: define_errors
create table vw_e (a int, b text);
create view vw_ev as select a, b from vw_e;
create view vw_ev as select 1;
create view vw_e as select 1;
create view vw_ev3 (x, y, z) as select a, b from vw_e;
create view vw_dup as select a, b as a from vw_e;
create view vw_bad as select nosuch from vw_e;
create view vw_bad2 as select * from nosuch;
create view vw_self as select * from vw_self;
create or replace view vw_ev as select a from vw_e;
create or replace view vw_ev as select a, a as b from vw_e;
create or replace view vw_ev as select a, b as bb from vw_e;
create or replace view vw_ev as select a, b, 1 as extra from vw_e;
select * from vw_ev;
create or replace view vw_e as select 1;
create view vw_p as select $1;

-- case: drop_and_dependencies
create table vw_d (a int primary key, b int);
create table vw_dc (a int references vw_d);
create view vw_d1 as select * from vw_d;
create view vw_d2 as select * from vw_d1;
create view vw_d3 as select 1 as one from vw_d2, vw_d;
drop table vw_d;
drop view vw_d1;
drop view nosuch;
drop view if exists nosuch;
drop view vw_dc;
drop table vw_d1;
drop view vw_d1 cascade;
select * from vw_d2;
drop table vw_d cascade;
create table vw_d (a int);
create view vw_d4 as select a from vw_d;
drop view vw_d4, nosuch;
drop view if exists vw_d4, nosuch;
select * from vw_d4;

-- case: instead_of_triggers
create table vw_base (a int, b int);
create view vw_iv as select a, b from vw_base;
create function vw_trg() returns trigger language plpgsql as $$
begin
  raise notice '% % % % (%)', tg_table_name, tg_when, tg_op, tg_level, tg_argv[0];
  if tg_level = 'ROW' then
    if tg_op = 'INSERT' then
      raise notice 'NEW: %, %', new.a, new.b;
      insert into vw_base values (new.a, new.b);
      return new;
    elsif tg_op = 'UPDATE' then
      raise notice 'OLD: %, %  NEW: %, %', old.a, old.b, new.a, new.b;
      update vw_base set a = new.a, b = new.b where a = old.a and b = old.b;
      if not found then return null; end if;
      return new;
    else
      raise notice 'OLD: %, %', old.a, old.b;
      delete from vw_base where a = old.a and b = old.b;
      if not found then return null; end if;
      return old;
    end if;
  end if;
  return null;
end $$;
create trigger x before insert on vw_iv for each row execute function vw_trg('x');
create trigger x after update on vw_iv for each row execute function vw_trg('x');
create trigger x before truncate on vw_iv for each statement execute function vw_trg('x');
create trigger x instead of insert on vw_base for each row execute function vw_trg('x');
create trigger x instead of update on vw_iv for each row when (old.a <> new.a) execute function vw_trg('x');
create trigger x instead of update of a on vw_iv for each row execute function vw_trg('x');
create trigger x instead of update on vw_iv execute function vw_trg('x');
create trigger vw_ins instead of insert on vw_iv for each row execute function vw_trg('ins');
create trigger vw_upd instead of update on vw_iv for each row execute function vw_trg('upd');
create trigger vw_del instead of delete on vw_iv for each row execute function vw_trg('del');
create trigger vw_bs before insert or update or delete on vw_iv for each statement execute function vw_trg('before');
create trigger vw_as after insert or update or delete on vw_iv for each statement execute function vw_trg('after');
insert into vw_iv values (1, 10), (2, 20);
insert into vw_iv values (3, 30) returning *;
update vw_iv set b = b + 1 where a >= 2 returning a, b;
update vw_iv set b = 0 where false;
delete from vw_iv where a = 1 returning *;
select * from vw_base order by a;
drop trigger vw_ins on vw_iv;
insert into vw_iv values (9, 9);
alter table vw_iv disable trigger vw_del;
drop trigger nosuch on vw_iv;
drop function vw_trg();
drop function vw_trg() cascade;
insert into vw_iv values (9, 9);

-- case: join_view_with_triggers
create table vw_country (id int primary key, name text);
create table vw_city (id int primary key, name text, country int references vw_country);
insert into vw_country values (1, 'Japan'), (2, 'UK');
insert into vw_city values (10, 'Tokyo', 1), (20, 'London', 2);
create view vw_cities as
  select c.id, c.name, k.name as country from vw_city c left join vw_country k on k.id = c.country;
insert into vw_cities values (30, 'Paris', 'France');
update vw_cities set country = 'UK' where id = 10;
delete from vw_cities;
create function vw_cities_ins() returns trigger language plpgsql as $$
declare k int;
begin
  select id into k from vw_country where name = new.country;
  if not found then
    insert into vw_country values ((select max(id) + 1 from vw_country), new.country)
      returning id into k;
  end if;
  insert into vw_city values (new.id, new.name, k);
  return new;
end $$;
create trigger vw_cities_ins instead of insert on vw_cities for each row execute function vw_cities_ins();
insert into vw_cities values (30, 'Paris', 'France'), (40, 'Kyoto', 'Japan') returning *;
select * from vw_cities order by id;
select * from vw_country order by id;

-- case: updatable_views
create table vw_u (a int primary key, b text default 'dflt', c int);
insert into vw_u values (1, 'x', 10), (2, 'y', 20), (3, 'z', 1);
create view vw_uv as select a, b, c + 1 as c1 from vw_u where c > 5;
insert into vw_uv (a, c1) values (4, 2);
insert into vw_uv (a) values (4) returning *;
insert into vw_uv values (5, 'q');
update vw_uv set c1 = 3;
update vw_uv set b = upper(b) returning *;
update vw_uv set b = 'never' where a = 3;
delete from vw_uv where a = 3;
select * from vw_u order by a;
create view vw_uv2 as select a as x, b from vw_uv where a > 1;
update vw_uv2 set b = 'n' where x < 3 returning *;
delete from vw_uv2 where x = 2 returning x, b;
select * from vw_u order by a;
create function vw_note() returns trigger language plpgsql as $$
begin raise notice '% % on %', tg_when, tg_op, tg_table_name; return null; end $$;
create trigger vw_note_v before insert on vw_uv for each statement execute function vw_note();
create trigger vw_note_t before insert on vw_u for each statement execute function vw_note();
insert into vw_uv (a) values (7);
insert into vw_uv (a) values (1);
create view vw_g as select b, count(*) from vw_u group by b;
insert into vw_g values ('a', 1);
update vw_g set b = 'a';
delete from vw_g;
create view vw_dist as select distinct a from vw_u;
delete from vw_dist;
create view vw_lim as select a from vw_u limit 1;
delete from vw_lim;
create view vw_un as select a from vw_u union select 1;
insert into vw_un values (1);
create view vw_const as select 1 as one;
delete from vw_const;
create view vw_srf as select generate_series(1, 2) as g from vw_u;
delete from vw_srf;
create view vw_agg as select max(a) as m from vw_u;
delete from vw_agg;
