-- Incremental: the first run builds the table, later runs add only the days after the last one.
{{ config(materialized='incremental', unique_key=['order_day', 'country']) }}
select order_day, country, sum(amount) as sales, count(*) as orders
from {{ ref('paid_orders') }}
{% if is_incremental() %}
where order_day > (select max(order_day) from {{ this }})
{% endif %}
group by order_day, country
