-- Foreign keys' referential actions: ON DELETE / ON UPDATE CASCADE, SET NULL and SET DEFAULT
-- carried out by statements of their own on the referencing table, whose triggers,
-- constraints and actions apply in turn; errors name the statement in a CONTEXT line.

-- case: referential_actions
create table fka_p (i int primary key, j int unique);
create table fka_c (id serial, i int references fka_p(i) on delete cascade on update cascade, note text);
create table fka_n (id serial, j int default 0 references fka_p(j) on delete set null on update set default);
create table fka_g (id serial, c int references fka_c(id) on delete cascade);
insert into fka_p values (0, 0), (1, 10), (2, 20), (3, 30);
insert into fka_c (i, note) values (1, 'a'), (1, 'b'), (2, 'c'), (3, 'd');
insert into fka_n (j) values (10), (20), (20), (null);
insert into fka_g (c) values (1), (2), (3), (4);
delete from fka_p where i = 1;
select * from fka_c order by id;
select * from fka_g order by id;
select * from fka_n order by id;
update fka_p set i = 22 where i = 2;
select * from fka_c order by id;
update fka_p set j = 33 where j = 30;
select * from fka_n order by id;
update fka_p set j = 21 where j = 20;
select * from fka_n order by id;
delete from fka_p where j = 0;
begin;
delete from fka_p;
select count(*) from fka_c;
select count(*) from fka_g;
rollback;
select count(*) from fka_c;
-- a cascade into a restricted child fails the whole statement
create table fka_r (c int references fka_c(id));
insert into fka_r values (3);
delete from fka_p where i = 22;
select * from fka_c order by id;
-- self-referencing tree
create table fka_tree (id int primary key, parent int references fka_tree(id) on delete cascade);
insert into fka_tree values (1, null);
insert into fka_tree values (2, 1);
insert into fka_tree values (3, 2), (4, 1), (5, null);
delete from fka_tree where id = 1;
select * from fka_tree;
-- set null on a not null column
create table fka_nn (j int not null references fka_p(j) on delete set null);
insert into fka_p values (9, 90);
insert into fka_nn values (90);
delete from fka_p where i = 9;
-- triggers on the child fire for cascaded rows
create function fka_tf() returns trigger language plpgsql as $$ begin raise notice '% % %', tg_op, tg_level, coalesce(old.id, -1); return old; end $$;
create trigger fka_trow before delete on fka_g for each row execute procedure fka_tf();
insert into fka_c (i, note) values (22, 'x');
insert into fka_g (c) select max(id) from fka_c;
delete from fka_c where note = 'x';

-- case: self_reference_in_one_statement
create table fks_tree (id int primary key, parent int references fks_tree(id));
insert into fks_tree values (2, 1), (1, null), (3, 2);
insert into fks_tree values (5, 4);
insert into fks_tree values (6, 6);
update fks_tree set parent = 7 where id = 3;
begin;
insert into fks_tree values (10, 11), (11, 10);
select count(*) from fks_tree;
rollback;
select * from fks_tree order by id;
create table fks_other (id int primary key);
create table fks_ref (r int references fks_other);
insert into fks_ref values (1);
