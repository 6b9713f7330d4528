-- Partition tree DDL: ATTACH and DETACH PARTITION (PostgreSQL's checks and messages, row
-- validation, a CHECK constraint that proves the rows, default partitions, sub-partitioned
-- tables), ALTER TABLE on a partitioned table carried down to every partition and refused
-- on a partition, indexes of a partitioned table on every partition (a matching one taken
-- over, dropped together), a partition's own constraints on rows written through the
-- parent, and satisfies_hash_partition. Left out, with the reason in the README: bound
-- errors PostgreSQL gives with a position, attaching a table whose columns are in another
-- order, and constraint errors of routed rows, which keel reports with the parent's name.

-- case: attach_detach
create table pd_p (a int not null, b text, constraint pc check (b <> 'z')) partition by range (a);
create table pd_p1 partition of pd_p for values from (0) to (10);
insert into pd_p values (1, 'one');
create table pd_t3 (a int not null, b text); insert into pd_t3 values (25);
alter table pd_p attach partition pd_t3 for values from (20) to (30);
alter table pd_t3 add constraint pc check (b <> 'z');
alter table pd_p attach partition pd_t3 for values from (30) to (40);
select count(*) from pd_p;
alter table pd_p attach partition pd_t3 for values from (20) to (30);
select tableoid::regclass, * from pd_p order by a;
alter table pd_p attach partition pd_p1 for values from (40) to (50);
create table pd_t5 (a int not null, b text, c int);
alter table pd_p attach partition pd_t5 for values from (50) to (60);
create table pd_t6 (a int not null);
alter table pd_p attach partition pd_t6 for values from (50) to (60);
create table pd_t7 (a bigint not null, b text);
alter table pd_p attach partition pd_t7 for values from (50) to (60);
create table pd_t4 (a int, b text);
alter table pd_p attach partition pd_t4 for values from (50) to (60);
alter table pd_t7 attach partition pd_t6 for values from (1) to (2);
alter table pd_p attach partition pd_p for values from (100) to (200);
alter table pd_p attach partition pd_nosuch for values from (100) to (200);
alter table pd_nosuch attach partition pd_t7 for values from (100) to (200);
alter table pd_p detach partition pd_t7;
alter table pd_p detach partition pd_p1 finalize;
create table pd_t9 (a int not null, b text, constraint pc check (b <> 'y'));
alter table pd_p attach partition pd_t9 for values from (60) to (70);
create table pd_t8 (a int not null, b text, constraint pc check (b <> 'z'));
alter table pd_p attach partition pd_t8 for values from (60) to (70);
insert into pd_p values (65, 'sixty-five');
select tableoid::regclass, * from pd_p order by a;
insert into pd_t8 values (75, 'x');
alter table pd_p detach partition pd_t3;
select tableoid::regclass, * from pd_p order by a;
select * from pd_t3;
insert into pd_t3 values (99, 'free');
alter table pd_p detach partition pd_t3;
create table pd_pd partition of pd_p default;
insert into pd_p values (75, 'def');
create table pd_t11 (a int not null, b text, constraint pc check (b <> 'z'));
alter table pd_p attach partition pd_t11 for values from (70) to (80);
alter table pd_p attach partition pd_t11 for values from (80) to (90);
alter table pd_p detach partition pd_p1 concurrently;
begin;
alter table pd_p detach partition pd_p1 concurrently;
rollback;
alter table pd_p attach partition pd_t11 for values from (70);
alter table pd_p attach partition pd_t11 default;
alter table pd_p attach partition pd_t11 for values from (90) to (95) extra;
alter table if exists pd_nosuch attach partition pd_t11 for values from (90) to (95);
alter table if exists pd_nosuch detach partition pd_t11;
alter table only pd_p detach partition pd_t11;
alter table only pd_p attach partition pd_t11 for values from (80) to (90);
select tableoid::regclass, * from pd_p order by a;

-- case: attach_with_indexes
create table pd_q (a int, b text) partition by list (a);
create unique index pd_q_a on pd_q (a);
create table pd_q1 (a int, b text);
insert into pd_q1 values (1), (null);
alter table pd_q attach partition pd_q1 for values in (1);
alter table pd_q attach partition pd_q1 for values in (1, null);
create table pd_q2 (a int, b text);
create unique index pd_q2_own on pd_q2 (a);
insert into pd_q2 values (2, 'x');
alter table pd_q attach partition pd_q2 for values in (2, 3);
insert into pd_q values (2, 'dup');
insert into pd_q values (3, 'three') on conflict (a) do update set b = 'upd';
insert into pd_q values (3, 'three') on conflict (a) do update set b = 'upd';
select tableoid::regclass, * from pd_q order by a;
drop index pd_q2_own;
alter table pd_q detach partition pd_q2;
drop index pd_q2_own;
insert into pd_q2 values (2, 'dup-ok-now?');

-- case: attach_hash_and_satisfies_hash_partition
create table pd_h (a int primary key) partition by hash (a);
create table pd_h0 (a int);
insert into pd_h0 select generate_series(1,10);
alter table pd_h attach partition pd_h0 for values with (modulus 2, remainder 0);
alter table pd_h0 alter column a set not null;
alter table pd_h attach partition pd_h0 for values with (modulus 2, remainder 0);
delete from pd_h0 where satisfies_hash_partition('pd_h'::regclass, 2, 0, a) is not true;
alter table pd_h attach partition pd_h0 for values with (modulus 2, remainder 0);
select count(*) from pd_h;
select satisfies_hash_partition('pd_h'::regclass, 2, 0, 4), satisfies_hash_partition('pd_h'::regclass, 2, 1, 4);
select satisfies_hash_partition('pd_h'::regclass, 2, 0, null::int), satisfies_hash_partition('pd_h'::regclass, null, 0, 1);
select satisfies_hash_partition('pd_h'::regclass, 0, 0, 1);
select satisfies_hash_partition('pd_h'::regclass, 2, 2, 1);
select satisfies_hash_partition('pd_h'::regclass, 2, 0, 1, 2);
select satisfies_hash_partition('pd_h'::regclass, 2, 0, 1::bigint);
select satisfies_hash_partition('pd_h0'::regclass, 2, 0, 1);
select count(*) from generate_series(1, 1000) g where satisfies_hash_partition('pd_h'::regclass, 2, 0, g);

-- case: attach_proof_and_sub_partitions
create table pd_r (a int not null, b int) partition by range (a);
create table pd_r1 (a int not null, b int, check (a >= 0 and a < 100));
insert into pd_r1 select g, g from generate_series(0, 99) g;
alter table pd_r attach partition pd_r1 for values from (0) to (100);
create table pd_r2 (a int not null, b int, check (a between 100 and 150));
insert into pd_r2 values (100, 1), (150, 2);
alter table pd_r attach partition pd_r2 for values from (100) to (151);
create table pd_r3 (a int not null, b int, check (a >= 200));
insert into pd_r3 values (300, 1);
alter table pd_r attach partition pd_r3 for values from (200) to (250);
select tableoid::regclass, count(*) from pd_r group by 1 order by 1;
create table pd_s (a int not null, b int not null) partition by range (a);
create table pd_s1 (a int not null, b int not null) partition by list (b);
create table pd_s1x partition of pd_s1 for values in (1);
insert into pd_s1 values (5, 1);
alter table pd_s attach partition pd_s1 for values from (0) to (10);
insert into pd_s values (6, 1);
insert into pd_s values (60, 1);
select tableoid::regclass, * from pd_s order by a;
create table pd_s2 (a int not null, b int not null) partition by list (b);
create table pd_s2x partition of pd_s2 for values in (1);
insert into pd_s2 values (50, 1);
alter table pd_s attach partition pd_s2 for values from (10) to (20);

-- case: alter_partition_tree
create table pd_ap (a int not null, b text, c int) partition by list (a);
create table pd_ap1 partition of pd_ap for values in (1);
create table pd_ap2 partition of pd_ap for values in (2, 3) partition by list (a);
create table pd_ap2x partition of pd_ap2 for values in (2);
insert into pd_ap values (1, 'one', 10), (2, 'two', 20);
alter table pd_ap1 add column d int;
alter table pd_ap1 drop column b;
alter table pd_ap2x rename column b to bb;
alter table pd_ap1 alter column a drop not null;
alter table pd_ap1 alter column c set not null;
alter table pd_ap1 alter column c set default 3;
alter table pd_ap drop column a;
alter table pd_ap add column d int;
insert into pd_ap values (3, 'x', 30, 300);
create table pd_ap3 partition of pd_ap for values in (4);
insert into pd_ap values (4, 'four', 40, 400);
select tableoid::regclass, * from pd_ap order by a;
select * from pd_ap2x;
alter table pd_ap drop column b;
select tableoid::regclass, * from pd_ap order by a;
insert into pd_ap values (1, 11, 111);
select * from pd_ap1 order by c;
alter table pd_ap rename column d to dd;
select * from pd_ap3;
alter table pd_ap add check (c > 0);
insert into pd_ap1 values (1, 0, 0);
alter table pd_ap add constraint big check (c < 1000);
insert into pd_ap3 values (4, 5000, 1);
alter table pd_ap alter column dd set default 7;
insert into pd_ap (a, c) values (2, 5);
select tableoid::regclass, * from pd_ap order by a;
alter table pd_ap alter column dd set not null;
delete from pd_ap where dd is null;
alter table pd_ap alter column dd set not null;
alter table pd_ap alter column dd drop not null;
create index on pd_ap (c);
create unique index on pd_ap (c);
create unique index on pd_ap (a, c);
insert into pd_ap values (1, 5, 5);
insert into pd_ap values (1, 5, 5);
drop index pd_ap1_a_c_idx;
drop index pd_ap_a_c_idx;
insert into pd_ap values (1, 5, 5);
create index pd_ap3_own on pd_ap3 (dd);
create index on pd_ap (dd);
drop index pd_ap3_own;
alter table pd_ap add primary key (a, c);
delete from pd_ap where a = 1 and c = 5 and dd = 5;
alter table pd_ap add primary key (a, c);
create table pd_ap5 partition of pd_ap for values in (5);
insert into pd_ap values (5, 1, 1), (5, 1, 2);
alter table pd_ap drop column c;
alter table pd_ap drop column dd;
select tableoid::regclass, * from pd_ap order by a;
insert into pd_ap values (5), (2);
select tableoid::regclass, * from pd_ap order by a;
drop table pd_ap;

-- case: partition_own_constraints
create table pd_op (a int not null, b int, c int) partition by list (a);
create table pd_op1 partition of pd_op for values in (1);
alter table pd_op1 add constraint small check (b < 10);
alter table pd_op1 alter column c set not null;
insert into pd_op values (1, 5, 1);
insert into pd_op values (1, 50, 1);
insert into pd_op values (1, 5, null);
update pd_op set b = 20 where a = 1;
create table pd_op2 (a int not null, b int, c int, constraint mine check (c > 0));
alter table pd_op attach partition pd_op2 for values in (2);
insert into pd_op values (2, 1, 0);
update pd_op set a = 2, c = -1 where a = 1;
update pd_op set a = 2 where a = 1;
select tableoid::regclass, * from pd_op;
