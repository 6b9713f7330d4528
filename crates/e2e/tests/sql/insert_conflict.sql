-- INSERT ... ON CONFLICT: arbiter inference, DO NOTHING, DO UPDATE with EXCLUDED, WHERE and
-- RETURNING, the errors PostgreSQL gives, EXPLAIN's conflict lines and the triggers an
-- upsert fires. Each "-- case:" block runs in its own psql session on keel and on
-- PostgreSQL 15 and the outputs must be identical.

-- case: forms_and_errors
create table oc_u (id int primary key, info text, n int default 0, uq int unique);
insert into oc_u values (1, 'a', 0, 10);
insert into oc_u values (1, 'b') on conflict (id) do update set info = info;
insert into oc_u values (1, 'b') on conflict (id) do update set info = oc_u.info || excluded.info returning *;
insert into oc_u as x values (1, 'c') on conflict (id) do update set info = oc_u.info;
insert into oc_u as x values (1, 'c') on conflict (id) do update set info = x.info || excluded.info where x.n = 5 returning *;
insert into oc_u as x values (1, 'c') on conflict (id) do update set info = x.info || excluded.info where x.n = 0 returning x.id, x.info;
insert into oc_u values (1, 'd') on conflict (info) do nothing;
insert into oc_u values (1, 'd') on conflict do update set info = 'z';
insert into oc_u values (1, 'd') on conflict on constraint nope do nothing;
insert into oc_u values (1, 'd') on conflict on constraint oc_u_pkey do nothing;
insert into oc_u values (2, 'd', 0, 10) on conflict (id) do nothing;
insert into oc_u values (2, 'd', 0, 10) on conflict do nothing;
insert into oc_u values (2, 'd', 0, 10) on conflict on constraint oc_u_uq_key do update set n = oc_u.n + 1 returning *;
insert into oc_u values (3, 'e'), (3, 'f') on conflict (id) do update set info = excluded.info;
insert into oc_u values (3, 'e'), (3, 'f') on conflict (id) do nothing;
insert into oc_u values (1, 'g') on conflict (id, info) do nothing;
insert into oc_u values (1, 'g') on conflict (uq, id) do nothing;
insert into oc_u values (1, 'g') on conflict (nope) do nothing;
insert into oc_u values (1, 'g') on conflict (id) do update set id = 7 returning *;
insert into oc_u values (1, 'g') on conflict (id) do update set n = excluded.n + 1, info = default returning *;
insert into oc_u values (1, 'h', 4) on conflict (id) do update set n = excluded.n + 1, info = default returning *;
select * from oc_u order by id;
insert into oc_u values (5) on conflict (id) do update set xmin = 1;
insert into oc_u values (5) on conflict (id) do update set nope = 1;
insert into oc_u values (5) on conflict (id) do update set info = excluded.nope;
insert into oc_u values (7) on conflict (id) do update set info = excluded.info where excluded.info is null returning *;
insert into oc_u values (7, 'x', 1, 10) on conflict (id) do update set uq = excluded.uq;
insert into oc_u values (7, 'x') on conflict (id) do update set uq = 11 returning *;
insert into oc_u values (7, 'x') on conflict (id) do update set n = (select count(*) from oc_u) returning *;
insert into oc_u select g, 'gen' || g from generate_series(1, 9) g on conflict (id) do update set info = oc_u.info || '+' returning id, info;
select * from oc_u order by id;

-- case: in_a_transaction
create table oc_t (k int primary key, v text);
begin;
insert into oc_t values (1, 'one');
insert into oc_t values (1, 'uno') on conflict (k) do update set v = oc_t.v || '/' || excluded.v;
insert into oc_t values (1, 'eins') on conflict (k) do update set v = oc_t.v || '/' || excluded.v returning *;
savepoint s;
insert into oc_t values (2, 'two') on conflict (k) do nothing;
rollback to s;
insert into oc_t values (2, 'deux') on conflict (k) do nothing returning *;
commit;
select * from oc_t order by k;
-- a NULL key never conflicts
create table oc_tn (k int unique, v int);
insert into oc_tn values (null, 1) on conflict (k) do update set v = oc_tn.v + 1;
insert into oc_tn values (null, 1) on conflict (k) do update set v = oc_tn.v + 1;
select * from oc_tn order by v;

-- case: explain
create table oc_e (id int primary key, n int, w int unique);
explain (costs off) insert into oc_e values (1, 2) on conflict (id) do update set n = excluded.n where oc_e.n > 0;
explain (costs off) insert into oc_e as x values (1, 2) on conflict (id) do update set n = excluded.n where x.n > excluded.n;
explain (costs off) insert into oc_e values (1, 2) on conflict do nothing;
explain (costs off) insert into oc_e values (1, 2) on conflict (id) do nothing;
explain (costs off) insert into oc_e values (1, 2) on conflict on constraint oc_e_w_key do nothing;

-- case: triggers
create table oc_tr (k int primary key, v int);
create table oc_log (what text);
create function oc_note() returns trigger language plpgsql as $$
begin
  if tg_level = 'ROW' then
    insert into oc_log values (tg_when || ' ' || tg_op || ' ' || coalesce(new.k::text, '-') || ' ' || coalesce(new.v::text, '-'));
    if tg_when = 'BEFORE' and tg_op = 'UPDATE' then
      new.v := new.v * 10;
    end if;
    return new;
  end if;
  insert into oc_log values (tg_when || ' STATEMENT ' || tg_op);
  return null;
end $$;
create trigger a before insert or update on oc_tr for each row execute function oc_note();
create trigger b after insert or update on oc_tr for each row execute function oc_note();
create trigger c before insert or update on oc_tr for each statement execute function oc_note();
create trigger d after insert or update on oc_tr for each statement execute function oc_note();
insert into oc_tr values (1, 1) on conflict (k) do update set v = excluded.v + 1;
insert into oc_tr values (1, 5) on conflict (k) do update set v = excluded.v + 1 returning *;
insert into oc_tr values (1, 7) on conflict (k) do nothing;
select * from oc_tr;
select * from oc_log;
