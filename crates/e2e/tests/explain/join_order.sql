-- Tables for tests/join_order.rs: join orders where starting from the table with the fewest
-- rows is wrong. dpc is the smallest table, but the selective condition is on dpa, whose
-- few rows reach dpb and then dpc through primary keys. dpd and dpe extend the chain.
create table dpc (id int primary key, name text);
insert into dpc select g, 'c' || g from generate_series(1, 2000) g order by g;
create table dpb (id int primary key, c_id int, v int);
insert into dpb select g, g % 2000 + 1, g from generate_series(1, 20000) g order by g;
create index dpb_c_id on dpb (c_id);
create table dpa (id int primary key, b_id int, tag int, d_id int);
insert into dpa select g, g, g % 1000, g % 300 + 1 from generate_series(1, 20000) g order by g;
create index dpa_tag on dpa (tag);
create table dpd (id int primary key, e_id int, label text);
insert into dpd select g, g % 40 + 1, 'd' || g from generate_series(1, 300) g order by g;
create table dpe (id int primary key, region text);
insert into dpe select g, 'region ' || (g % 4) from generate_series(1, 40) g order by g;
vacuum analyze dpa;
vacuum analyze dpb;
vacuum analyze dpc;
vacuum analyze dpd;
vacuum analyze dpe;
