{% macro spark__get_where_subquery(relation) %}
    {#-
        dbt's filter of a tested relation by the test's where config, with
        two markers the project's tests use, resolved when the test runs
        (so they follow visitor_lookup__test_scope however it is set, and the
        schema the models are in):
          __visitor_lookup_touched_cookies__  the rows of the cookies the
                                              latest run changed
          __visitor_lookup_stored_events__    the rows of processed_events
                                              with an event id the latest
                                              run stored (older rows with
                                              those ids too); on Iceberg,
                                              the columns its key test reads
        With visitor_lookup__test_scope 'all', any marker means every row.
        dbt looks for this macro through its dispatch order: first in the
        root project, in a host project once its dispatch config names this
        package. It runs in its caller's namespace, so it reaches this
        package's macros only through adapter.dispatch. Any other where (a
        host project's tests) gets dbt's own filter.
    -#}
    {%- set where = config.get('where', '') -%}
    {%- if where not in ['__visitor_lookup_touched_cookies__', '__visitor_lookup_stored_events__'] -%}
        {{ return(dbt.default__get_where_subquery(relation)) }}
    {%- endif -%}
    {%- if var('visitor_lookup__test_scope', 'changed') == 'all' -%}
        {{ return(relation) }}
    {%- endif -%}
    {%- set latest_run_query = 'select max(run_number) from ' ~ relation.schema ~ '.processed_events' -%}
    {%- set latest_run_number = '(' ~ latest_run_query ~ ')' -%}
    {%- if execute and where == '__visitor_lookup_stored_events__' -%}
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
    } -%}
    {%- set rows = relation -%}
    {%- set stored = adapter.get_relation(relation.database, relation.schema, relation.identifier)
        if execute and where == '__visitor_lookup_stored_events__' else none -%}
    {%- if stored is not none and visitor_lookup_listed_property(stored, 'table_type') == 'ICEBERG'
        and 'event_key' in visitor_lookup_listed_columns(stored) -%}
        {#-
            As processed_events finds the stored copies of its events
            (iceberg_data_files_as_parquet, dispatched by its package's name, which
            resolves in any caller's namespace): only the rows of the data
            files holding a 64-bit event_key of the latest run's ids, found
            by one statement that reads that column alone, with the columns
            the key test of processed_events reads.
        -#}
        {%- set rows = adapter.dispatch('iceberg_data_files_as_parquet', 'visitor_lookup')(
            relation,
            {'event_id': 'string', 'visitor_cookie_id': 'string', 'landed': 'timestamp', 'loaded_at': 'timestamp',
                'run_number': 'int'},
            'event_key',
            'select event_key from ' ~ relation.schema ~ '.processed_events where ' ~ latest_run
        ) -%}
    {%- endif -%}
    {{ return('(select * from ' ~ rows ~ ' where ' ~ markers[where] ~ ') dbt_subquery') }}
{% endmacro %}
