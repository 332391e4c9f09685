"""The producer room: what any OpenLineage producer needs besides the SDK, nothing of Spark.

- ``_events``: run events and their run facets (parent, processing engine, error), job names;
- ``_naming``: dataset names and namespaces as the OpenLineage naming spec gives them;
- ``_jdbc`` and ``_sql_tables``: a JDBC table's name, and the tables a SQL query reads;
- ``_secrets``: credentials scrubbed from every text that leaves the process;
- ``_budget`` and ``_condense``: one byte budget per event, lists condensed soundly to fit it;
- ``_settings``: the job namespace, application name and parent run, from arguments,
  ``spark.openlineage.*`` conf and the environment (``LineageSettingsWarning``);
- ``_degrade``: a dataset that lost its precision, said once;
- ``_excepthook``: an uncaught exception marks the open captures failed.

Arrows point down: ``spark`` and ``delivery`` use this room; it uses only the SDK.
"""
