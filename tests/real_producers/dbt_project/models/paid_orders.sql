-- A view on the orders table (the seed, read as a source): the orders with a positive amount.
{{ config(materialized='view') }}
select order_id, cast(order_day as date) as order_day, country, amount
from {{ source('shop_raw', 'orders') }}
where amount > 0
