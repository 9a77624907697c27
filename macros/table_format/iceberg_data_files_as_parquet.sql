{% macro default__iceberg_data_files_as_parquet(relation, columns, key_column, keys) %}
    {#-
        The one read behind a format's reader: the rows of the Iceberg data files holding a row
        whose key_column is among `keys`, read as plain Parquet, as Iceberg skips no file by a filter
        on _file (docs/performance.md says what it buys). Those files are the table's rows, by these
        names, only while the table has no delete file (position or equality deletes, deletion
        vectors), its schema is the one it was created with (Iceberg resolves columns by field id,
        Parquet by name), no name mapping reads files written without field ids, and its files are
        Parquet. With any of these, or a listing that does not give the schema's id (a catalog other
        than Hive's), the table itself, through its reader.
    -#}
    {%- set mapped = visitor_lookup_listed_property(relation, 'schema.name-mapping.default') -%}
    {%- set file_format = visitor_lookup_listed_property(relation, 'write.format.default') -%}
    {%- if visitor_lookup_listed_schema_id(relation) != 0 or mapped is not none
        or (file_format or 'parquet') | lower != 'parquet' -%}
        {{ return(relation) }}
    {%- endif -%}
    {%- set found -%}
        select
            to_json(collect_set(_file)) as data_files,
            (select count(*) from {{ relation }}.delete_files) as delete_files
        from {{ relation }}
        where {{ key_column }} in ({{ keys }})
    {%- endset -%}
    {%- set row = run_query(found).rows[0] -%}
    {%- if row['delete_files'] > 0 -%}
        {{ return(relation) }}
    {%- endif -%}
    {%- set data_files = fromjson(row['data_files']) | sort -%}
    {%- if not data_files -%}
        {{ return(visitor_lookup_empty_relation(columns)) }}
    {%- endif -%}
    {%- set rows_of_data_files -%}
        (
        {%- for data_file in data_files %}
            select
            {%- for name, type in columns.items() %}
                cast({{ name }} as {{ type }}) as {{ name }}{{ ',' if not loop.last }}
            {%- endfor %}
            from parquet.`{{ data_file | replace('`', '``') }}`
            {{- ' union all' if not loop.last }}
        {%- endfor %}
        )
    {%- endset -%}
    {{ return(rows_of_data_files) }}
{% endmacro %}
