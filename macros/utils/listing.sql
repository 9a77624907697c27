{#-
    What dbt-spark's listing of a schema says about a table (its
    `information`, the text of SHOW TABLE EXTENDED), read without a
    statement. dbt documents no parsed form of it, so this file is the one
    place that reads that text; pytests/test_listing.py fails on a dbt-spark
    whose listing these macros no longer read.
-#}

{% macro visitor_lookup_listed_location(relation) %}
    {#- The table's folder, or none when the listing gives none. -#}
    {%- set found = modules.re.search('^Location: (.+)$', relation.information or '', modules.re.M) -%}
    {{ return(found.group(1) | trim if found is not none else none) }}
{% endmacro %}


{% macro visitor_lookup_listed_columns(relation) %}
    {#- The table's lowercase column names, in order; empty when the listing gives none. -#}
    {%- set listed = modules.re.findall('^ \\|-- ([^:]+):', relation.information or '', modules.re.M) -%}
    {{ return(listed | map('lower') | list) }}
{% endmacro %}


{% macro visitor_lookup_listed_property(relation, name) %}
    {#-
        A table property's value as the listing gives it (a flat JSON
        object whole), or none when the listing does not hold it.
    -#}
    {%- set pattern = '[\\[ ,]' ~ modules.re.escape(name) ~ '=(\\{[^}]*\\}|[^,\\]\n]*)' -%}
    {%- set found = modules.re.search(pattern, relation.information or '') -%}
    {{ return(found.group(1) if found is not none else none) }}
{% endmacro %}


{% macro visitor_lookup_listed_schema_id(relation) %}
    {#- An Iceberg table's current schema id (its Hive catalog's current-schema), or none when not listed. -#}
    {%- set found = modules.re.search('[\\[ ,]current-schema=\\{"type":"struct","schema-id":(\\d+)', relation.information or '') -%}
    {{ return(found.group(1) | int if found is not none else none) }}
{% endmacro %}
