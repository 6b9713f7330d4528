-- The join benchmark's tables, loaded the same way on keel and on PostgreSQL 15 by psql with
-- -v customers=... -v products=... -v orders=... (order_lines = 3 per order).
-- Values come from arithmetic on generate_series, not random(), so both engines hold exactly
-- the same rows. Orders arrive in time order over one year (created_at grows with id), each
-- order belongs to a customer spread by a multiplicative step (prime to the customer count),
-- and its three lines name products spread the same way.
-- Tables are loaded first; primary keys, indexes and foreign keys come afterwards, which is
-- how a bulk load is done and keeps the load within minutes on two cores.
\set ON_ERROR_STOP 1
\timing on

create table customers (
    id int not null,
    name text not null,
    email text not null,
    city text not null,
    signed_up_at timestamp not null
);
create table products (
    id int not null,
    name text not null,
    category text not null,
    price numeric(10, 2) not null
);
create table orders (
    id int not null,
    customer_id int not null,
    created_at timestamp not null,
    status text not null,
    total numeric(12, 2) not null
);
create table order_lines (
    order_id int not null,
    line_no int not null,
    product_id int not null,
    qty int not null,
    unit_price numeric(10, 2) not null
);

insert into customers
select i, 'customer ' || i, 'customer' || i || '@example.com', 'city ' || (i % 500),
       timestamp '2023-01-01' + (i % 365) * interval '1 day'
from generate_series(1, :customers) i;

insert into products
select i, 'product ' || i, 'category ' || (i % 20), (i * 7919 % 19900 + 100) / 100.0
from generate_series(1, :products) i;

-- Series are bigint: i * 7919 passes 2^31 at a million orders.
insert into orders
select i::int, (i * 7919 % :customers + 1)::int,
       timestamp '2024-01-01' + (i * 31536000 / :orders) * interval '1 second',
       case when i % 20 = 0 then 'cancelled' when i % 3 = 0 then 'shipped' else 'paid' end,
       i * 104729 % 50000 / 100.0
from generate_series(1::bigint, :orders) i;

-- One series, so both engines store the lines in order_id order whatever their join order.
insert into order_lines
select (i / 3 + 1)::int, (i % 3 + 1)::int, p::int, (i % 5 + 1)::int, (p * 7919 % 19900 + 100) / 100.0
from (select i, i * 7919 % :products + 1 as p from generate_series(0::bigint, 3 * :orders - 1) i) s;

alter table customers add primary key (id);
alter table products add primary key (id);
alter table orders add primary key (id);
alter table order_lines add primary key (order_id, line_no);
-- The foreign-key indexes. orders' is on (customer_id, created_at): it serves the foreign key
-- and "a customer's latest orders"; created_at alone serves the date-range queries.
create index orders_customer_id_created_at_idx on orders (customer_id, created_at);
create index orders_created_at_idx on orders (created_at);
create index order_lines_product_id_idx on order_lines (product_id);
alter table orders add foreign key (customer_id) references customers (id);
alter table order_lines add foreign key (order_id) references orders (id);
alter table order_lines add foreign key (product_id) references products (id);

analyze customers;
analyze products;
analyze orders;
analyze order_lines;
