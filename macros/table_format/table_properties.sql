{#-
    The properties and partitioning the project's tables are created with,
    merged with those a host project configures the dbt way.
-#}

{% macro visitor_lookup_lookup_partition_by() %}
    {#-
        The lookup tables' partitioning, set when they are created. A run
        touches cookies spread over every prefix, so partitions never spare a
        merge any reading; they only multiply the files each merge writes
        (256 prefixes: a data and a delete file in each, per table and run).
        Unpartitioned by default; partitioning by vcid_first_two pays once a
        table is many hundreds of MB (var visitor_lookup__partition_lookup_tables).
    -#}
    {%- if visitor_lookup_var_boolean('visitor_lookup__partition_lookup_tables') -%}
        {{ return(['vcid_first_two']) }}
    {%- endif -%}
    {{ return(none) }}
{% endmacro %}


{% macro visitor_lookup_table_properties(kind='kept', configured=none) %}
    {#-
        Table properties set when a table is created, from the storage
        mapping for the models' table format: those of every table the
        project keeps, and for kind 'lookup' those of the lookup tables
        added (with visitor_lookup__lookup_write_mode); then a model's
        tblproperties config (`configured`, a host's dbt_project.yml or the
        model's config) over them. The lookup tables' write mode is the
        var's alone, and the project's own `visitor_lookup.` properties are
        its machinery's: a config that sets either otherwise stops the run.
        None when there are none.
    -#}
    {%- set write_mode = visitor_lookup_lookup_write_mode() if kind == 'lookup' else none -%}
    {%- set properties = visitor_lookup_storage(write_mode)[visitor_lookup_table_format()] -%}
    {%- set chosen = {} -%}
    {%- do chosen.update(properties['kept']) -%}
    {%- if kind == 'lookup' -%}
        {%- do chosen.update(properties['lookup']) -%}
        {#- Shown by dbt's listing: a run checks the var against it without reading the table. -#}
        {%- do chosen.update({'visitor_lookup.partition_prefix_length':
            visitor_lookup_var_whole_number('visitor_lookup__partition_prefix_length', 1) | string}) -%}
    {%- endif -%}
    {%- for name, value in visitor_lookup_configured_properties(configured).items() -%}
        {%- if kind == 'lookup' and name in properties['lookup'] and value != chosen[name] -%}
            {%- do exceptions.raise_compiler_error(
                "Visitor lookup: the tblproperties config of " ~ model.name ~ " sets '" ~ name ~ "' = '"
                ~ value ~ "', but the lookup tables' write mode gives '" ~ chosen[name] ~ "': choose it "
                ~ "with var visitor_lookup__lookup_write_mode (merge-on-read or copy-on-write) and leave "
                ~ "'" ~ name ~ "' out of tblproperties."
            ) -%}
        {%- endif -%}
        {%- do chosen.update({name: value}) -%}
    {%- endfor -%}
    {{ return(chosen or none) }}
{% endmacro %}


{% macro visitor_lookup_configured_properties(configured) %}
    {#-
        A model's tblproperties config as table properties, for the kept and
        the per-run tables alike: names and values as text (YAML's true and
        false lower case, as Spark's booleans). A property named
        visitor_lookup.* is the project's machinery's and stops the run.
    -#}
    {%- set properties = {} -%}
    {%- for name, value in (configured or {}).items() -%}
        {%- if (name | string | lower).startswith('visitor_lookup.') -%}
            {%- do exceptions.raise_compiler_error(
                "Visitor lookup: the tblproperties config of " ~ model.name ~ " sets '" ~ name ~ "'; "
                ~ "properties named visitor_lookup.* are the project's own: leave them out of tblproperties."
            ) -%}
        {%- endif -%}
        {%- do properties.update({name | string: (value | string | lower) if value is boolean else value | string}) -%}
    {%- endfor -%}
    {{ return(properties) }}
{% endmacro %}
