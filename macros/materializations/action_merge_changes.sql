{% macro action_merge_changes(rebuilt, stored, key_columns, value_columns, keep_unchanged=false) %}
    {#-
        The change set between the rows a model rebuilt and the stored rows
        they replace (both CTE names, with the same columns): rebuilt rows
        that are new ('insert') or differ ('update'), stored rows no longer
        rebuilt ('delete'). Unchanged rows are left out, so the merge does not
        touch them, or with keep_unchanged given as 'keep', for a later model
        that needs every row after the merge. One full outer join: each side
        is read once (a left join plus an anti join read both twice, and
        Spark computes a CTE anew for every reference). The first key column
        is never NULL on either side, so its NULL says which side a row is
        missing from.
    -#}
    {%- set first_key = key_columns[0] -%}
    {%- set joined_on = [] -%}
    {%- for key in key_columns -%}
        {%- do joined_on.append(rebuilt ~ '.' ~ key ~ ' = ' ~ stored ~ '.' ~ key) -%}
    {%- endfor -%}
    {%- set changed = [] -%}
    {%- for column in value_columns -%}
        {%- do changed.append('not ' ~ rebuilt ~ '.' ~ column ~ ' <=> ' ~ stored ~ '.' ~ column) -%}
    {%- endfor -%}
    {%- set differs = [stored ~ '.' ~ first_key ~ ' is null', rebuilt ~ '.' ~ first_key ~ ' is null'] + changed -%}
    select
        {%- for column in key_columns + value_columns %}
        case when {{ rebuilt }}.{{ first_key }} is null then {{ stored }}.{{ column }} else {{ rebuilt }}.{{ column }} end
            as {{ column }},
        {%- endfor %}
        case
            when {{ stored }}.{{ first_key }} is null then 'insert'
            when {{ rebuilt }}.{{ first_key }} is null then 'delete'
            {%- if keep_unchanged %}
            when {{ changed | join(' or ') }} then 'update'
            else 'keep'
            {%- else %}
            else 'update'
            {%- endif %}
        end as merge_action
    from {{ rebuilt }}
    full outer join {{ stored }}
        on {{ joined_on | join(' and ') }}
    {%- if not keep_unchanged %}
    where {{ differs | join(' or ') }}
    {%- endif %}
{% endmacro %}
