drop table if exists test;
drop table if exists p;
