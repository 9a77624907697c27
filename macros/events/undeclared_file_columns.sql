{% macro visitor_lookup_undeclared_file_columns(folder, layout) %}
    {#-
        The columns of the folder's files (as Spark reads them without declared columns) that the
        mapping names but the folder is not read with, name to type. Words inside quotes, before a
        parenthesis (functions) and SQL's own words are not names of columns; no statement when no
        other word is left, nor when the folder has no file.
    -#}
    {%- set mapping = (layout.columns.values() | list + [layout.filter or '']) | join(' ') -%}
    {%- set unquoted = modules.re.sub("'[^']*'|\"[^\"]*\"", ' ', mapping) -%}
    {%- set sql_words = [
        'and', 'as', 'asc', 'between', 'bigint', 'boolean', 'both', 'by', 'case', 'date', 'day', 'decimal',
        'desc', 'distinct', 'double', 'else', 'end', 'escape', 'false', 'first', 'float', 'from', 'hour',
        'ilike', 'in', 'int', 'interval', 'is', 'last', 'leading', 'like', 'minute', 'month', 'not', 'null',
        'nulls', 'or', 'order', 'over', 'partition', 'rlike', 'second', 'string', 'then', 'timestamp',
        'timestamp_ntz', 'trailing', 'true', 'when', 'year',
    ] -%}
    {%- set declared = layout.file_columns.keys() | map('lower') | list -%}
    {%- set named = [] -%}
    {%- for word in modules.re.findall('\\b([A-Za-z_][A-Za-z0-9_]*)\\b(?!\\s*\\()', unquoted) | map('lower') -%}
        {%- if word not in declared and word not in sql_words and word not in named -%}
            {%- do named.append(word) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if not named or run_query(
        'select count(*) as files from binaryfile.' ~ adapter.quote(folder)
    ).rows[0]['files'] == 0 -%}
        {{ return({}) }}
    {%- endif -%}
    {%- set undeclared = {} -%}
    {%- for column in run_query('describe query select * from parquet.' ~ adapter.quote(folder)).rows -%}
        {%- if column['col_name'] | lower in named -%}
            {%- do undeclared.update({column['col_name']: column['data_type']}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(undeclared) }}
{% endmacro %}
