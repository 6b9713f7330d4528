-- The EXPLAIN corpus schema: a small order-entry database, loaded the same way on both engines.
-- Every value is computed from generate_series (no random()), and no table has more than
-- 30,000 rows, so ANALYZE (sample of 300 x default_statistics_target = 30,000 rows) reads
-- every row and gathers exactly the same statistics on every run. The ORDER BYs fix the physical
-- row order (and so the correlation statistics) whatever plan runs the INSERT.
create table customers (
    id int primary key,
    name text not null,
    city text not null,
    signup date not null
);
insert into customers
select i, 'customer ' || i, 'city ' || (i % 50), date '2023-01-01' + (i % 365)
from generate_series(1, 3000) i
order by i;

create table products (
    id int primary key,
    name text not null,
    category text not null,
    price numeric(10, 2) not null
);
insert into products
select i, 'product ' || i, 'category ' || (i % 20), (i * 37 % 1000) / 10.0 + 1
from generate_series(1, 5000) i
order by i;

-- 7919 is prime to 3000, so every customer has 3 or 4 orders.
create table orders (
    id int primary key,
    customer_id int not null references customers,
    status text not null,
    created_at timestamp not null,
    amount numeric(12, 2) not null
);
insert into orders
select i, i * 7919 % 3000 + 1,
       case when i % 10 = 0 then 'cancelled' when i % 3 = 0 then 'shipped' else 'open' end,
       timestamp '2024-01-01' + i * interval '52 minutes',
       i * 13 % 5000 / 10.0
from generate_series(1, 10000) i
order by i;
create index orders_customer_id_idx on orders (customer_id);
create index orders_created_at_idx on orders (created_at);

create table order_lines (
    order_id int not null references orders,
    line_no int not null,
    product_id int not null references products,
    qty int not null,
    primary key (order_id, line_no)
);
insert into order_lines
select o, l, (o * 31 + l * 17) % 5000 + 1, (o + l) % 5 + 1
from generate_series(1, 10000) o, generate_series(1, 3) l
order by o, l;
create index order_lines_product_id_idx on order_lines (product_id);

-- No index at all: scans, sorts and aggregates that cannot use one.
create table events (
    id int not null,
    kind int not null,
    note text not null
);
insert into events
select i, i % 7, 'event ' || (i * 11 % 1000)
from generate_series(1, 20000) i
order by i;

vacuum analyze customers;
vacuum analyze products;
vacuum analyze orders;
vacuum analyze order_lines;
vacuum analyze events;
