{% macro visitor_lookup_this_or_empty(columns, model_name=none) %}
    {#-
        What an incremental model (this one, or model_name) has stored so
        far: the table itself, or on the first build (and --full-refresh) an
        empty relation with the given columns ({name: type}, in order), so
        one query serves both.
    -#}
    {%- if visitor_lookup_is_incremental(model_name) -%}
        {{ return(visitor_lookup_model_relation(model_name) if model_name else this) }}
    {%- endif -%}
    {{ return(visitor_lookup_empty_relation(columns)) }}
{% endmacro %}


{% macro visitor_lookup_stored_rows(columns, key_column, keys) %}
    {#-
        The stored rows an incremental model compares with: those whose
        key_column is among `keys` (a query of one column), and possibly
        others, as the model joins on its own key anyway. On Iceberg only the
        data files holding one of the keys are read, where that is safe
        (iceberg_data_files_as_parquet), elsewhere the whole table; on the
        first build an empty relation with the given columns ({name: type},
        in order).
    -#}
    {%- if not visitor_lookup_is_incremental() -%}
        {{ return(visitor_lookup_empty_relation(columns)) }}
    {%- endif -%}
    {%- if visitor_lookup_table_format() != 'iceberg' -%}
        {{ return(this) }}
    {%- endif -%}
    {%- set stored = adapter.get_relation(this.database, this.schema, this.identifier) -%}
    {{ return(adapter.dispatch('iceberg_data_files_as_parquet', 'visitor_lookup')(stored, columns, key_column, keys)) }}
{% endmacro %}


{% macro visitor_lookup_stored_columns(relation) %}
    {#-
        The lowercase column names of a table, from dbt's listing of its
        schema (the relation's information) with no statement, or where the
        listing gives none, from DESCRIBE.
    -#}
    {%- set listed = visitor_lookup_listed_columns(relation) -%}
    {%- if listed -%}
        {{ return(listed) }}
    {%- endif -%}
    {{ return(adapter.get_columns_in_relation(relation) | map(attribute='name') | map('lower') | list) }}
{% endmacro %}


{% macro visitor_lookup_empty_relation(columns) %}
    {#- A relation with the given columns ({name: type}, in order) and no row. -#}
    {%- set casts = [] -%}
    {%- for name, type in columns.items() -%}
        {%- do casts.append('cast(null as ' ~ type ~ ') as ' ~ name) -%}
    {%- endfor -%}
    {{ return('(select ' ~ casts | join(', ') ~ ' where false)') }}
{% endmacro %}
