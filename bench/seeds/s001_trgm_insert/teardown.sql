drop table if exists trgm_test;
