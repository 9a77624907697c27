{% macro visitor_lookup_kept_table_options(kind='kept', configured=none) %}
    {#-
        The `using` and `tblproperties` clauses of a table the project keeps
        (created by the hooks or by the materialization action_merge), in the
        table format of this run's session, with a model's own tblproperties
        config (`configured`) over the project's defaults.
    -#}
    using {{ visitor_lookup_table_format() }}
    {%- set properties = visitor_lookup_table_properties(kind, configured) %}
    {%- if properties %}
    tblproperties ({{ visitor_lookup_property_list(properties) }})
    {%- endif %}
{% endmacro %}


{% macro visitor_lookup_property_list(properties) %}
    {#- The inside of a tblproperties or options clause: 'name' = 'value', one per line. -#}
    {%- for name, value in properties.items() %}
        '{{ name }}' = '{{ value }}'{{ ',' if not loop.last }}
    {%- endfor %}
{% endmacro %}
