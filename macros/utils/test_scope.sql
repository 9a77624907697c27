{% macro spark__get_where_subquery(relation) %}
    {#-
        dbt's filter of a tested relation by the test's where config, with
        three markers the project's tests use, resolved when the test runs
        (so they follow visitor_lookup__test_scope however it is set, and the
        schema the models are in):
          __visitor_lookup_touched_cookies__  the rows of the cookies the
                                              latest run changed
          __visitor_lookup_stored_events__    the rows of the event ids the
                                              latest run stored (older rows
                                              with those ids too); on
                                              Iceberg, their event_id only
          __visitor_lookup_latest_run_rows__  the rows the latest run stored,
                                              by their run_number: file
                                              statistics skip the others
        With visitor_lookup__test_scope 'all', any marker means every row.
        dbt looks for this macro through its dispatch order: first in the
        root project, in a host project once its dispatch config names this
        package. It runs in its caller's namespace, so it calls no macro of
        this package. Any other where (a host project's tests) gets dbt's own
        filter.
    -#}
    {%- set where = config.get('where', '') -%}
    {%- if where not in [
        '__visitor_lookup_touched_cookies__', '__visitor_lookup_stored_events__', '__visitor_lookup_latest_run_rows__'
    ] -%}
        {{ return(dbt.default__get_where_subquery(relation)) }}
    {%- endif -%}
    {%- if var('visitor_lookup__test_scope', 'changed') == 'all' -%}
        {{ return(relation) }}
    {%- endif -%}
    {%- set latest_run_query = 'select max(run_number) from ' ~ relation.schema ~ '.processed_events' -%}
    {%- set latest_run_number = '(' ~ latest_run_query ~ ')' -%}
    {%- if execute and where in ['__visitor_lookup_stored_events__', '__visitor_lookup_latest_run_rows__'] -%}
        {#-
            The latest run's number as a literal: the table's file statistics
            then narrow its rows while Spark plans, and the event ids they
            hold go to every task (a broadcast) instead of every stored id
            through a shuffle (docs/performance.md).
        -#}
        {%- set latest = run_query(latest_run_query).columns[0].values()[0] -%}
        {%- set latest_run_number = latest if latest is not none else 'null' -%}
    {%- endif -%}
    {%- set latest_run = 'run_number = ' ~ latest_run_number -%}
    {%- set markers = {
        '__visitor_lookup_touched_cookies__':
            'visitor_cookie_id in (select visitor_cookie_id from '
            ~ relation.schema ~ '.base_cookie_changes_this_run)',
        '__visitor_lookup_stored_events__':
            'event_id in (select event_id from ' ~ relation.schema ~ '.processed_events where ' ~ latest_run ~ ')',
        '__visitor_lookup_latest_run_rows__': latest_run,
    } -%}
    {%- set rows = relation -%}
    {%- set stored = adapter.get_relation(relation.database, relation.schema, relation.identifier)
        if execute and where == '__visitor_lookup_stored_events__' else none -%}
    {%- set information = (stored.information or '') if stored is not none else '' -%}
    {%- if 'table_type=ICEBERG' in information and ' |-- event_key:' in information -%}
        {#-
            As processed_events finds the stored copies of its events: one
            statement reads event_key alone (8 bytes a row, where every id
            is 36) and names the data files holding a key of the latest run's
            ids (or a key not filled yet); only those files' ids are then
            compared. Data files are the table's rows only while it has no
            delete files: with any, every row is read.
        -#}
        {%- set found -%}
            select
                to_json(collect_set(_file)) as data_files,
                (select count(*) from {{ relation }}.delete_files) as delete_files
            from {{ relation }}
            where event_key is null or event_key in (
                select event_key from {{ relation.schema }}.processed_events where {{ latest_run }}
            )
        {%- endset -%}
        {%- set row = run_query(found).rows[0] -%}
        {%- if row['delete_files'] == 0 -%}
            {%- set reads = [] -%}
            {%- for data_file in fromjson(row['data_files']) | sort -%}
                {%- do reads.append('select event_id from parquet.`' ~ data_file | replace('`', '``') ~ '`') -%}
            {%- endfor -%}
            {%- set rows = '(' ~ (reads | join(' union all ') or 'select cast(null as string) as event_id where false') ~ ')' -%}
        {%- endif -%}
    {%- endif -%}
    {{ return('(select * from ' ~ rows ~ ' where ' ~ markers[where] ~ ') dbt_subquery') }}
{% endmacro %}
