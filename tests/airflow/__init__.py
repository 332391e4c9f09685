"""Airflow running a DAG of PySpark tasks under our capture (``nox -s airflow``)."""
