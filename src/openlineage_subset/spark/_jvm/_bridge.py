"""The bridge itself: reaching JVM classes through py4j, and reading values back in bulk.

Every other module of the layer talks to the JVM through these: classes and static members
looked up once per JVM, collections and maps read in one or two round trips whatever their
size, trees crossing as one ``toJSON()`` string, and the base of the Python objects the JVM
calls back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

from openlineage_subset.spark._trees import Node, decode

JavaObject = Any
"""A JVM object as py4j hands it over: typed loosely, since py4j has no types to give."""

_SEPARATOR = "\u0000"
"""Joins the texts of a collection crossing py4j: no path or name can hold it."""
_CLASSES: dict[tuple[int, str], Any] = {}
"""What was looked up once per JVM (classes, members, fields), by JVM and name."""


def jvm_view() -> Any:
    """The JVM of the active SparkContext."""
    from pyspark import SparkContext  # noqa: PLC0415  (pyspark is optional)

    jvm = SparkContext._jvm
    if jvm is None:
        raise RuntimeError("no active SparkContext")
    return jvm


def java_class(name: str) -> Any:
    """A JVM class by its full name, looked up once per JVM.

    Reaching a class through py4j's JVM view (``jvm.org.apache...``) costs one round trip per
    dotted name, every time; the class object, kept, costs none.
    """
    jvm = jvm_view()
    key = (id(jvm), name)
    if key not in _CLASSES:
        target = jvm
        for part in name.split("."):
            target = getattr(target, part)
        _CLASSES[key] = target
    return _CLASSES[key]


def java_member(class_name: str, member: str) -> Any:
    """A static method of a JVM class, looked up once per JVM (py4j asks the JVM each time an
    attribute of a class is read). ``java.lang.Class:<name>`` stands for the ``Class`` object
    of ``<name>``, whose instance methods (``isInstance``) are then the members.
    """
    key = (id(jvm_view()), f"{class_name}#{member}")
    if key not in _CLASSES:
        if class_name.startswith("java.lang.Class:"):
            target = java_class("java.lang.Class").forName(class_name.partition(":")[2])
        else:
            target = java_class(class_name)
        _CLASSES[key] = getattr(target, member)
    return _CLASSES[key]


def once_per_jvm(name: str, look_up: Callable[[], Any]) -> Any:
    """What ``look_up()`` returns, asked once per JVM and kept under ``name`` (a reflected
    field, say, whose lookup costs round trips every time)."""
    key = (id(jvm_view()), name)
    if key not in _CLASSES:
        _CLASSES[key] = look_up()
    return _CLASSES[key]


def is_instance(value: JavaObject, class_name: str) -> bool:
    """Whether a JVM object is an instance of the class named ``class_name``."""
    target = java_class("java.lang.Class").forName(class_name)
    return bool(target.isAssignableFrom(value.getClass()))


def java_array_type() -> type:
    """py4j's type for a JVM array (what a method returning one hands over)."""
    from py4j.java_collections import JavaArray  # noqa: PLC0415  (pyspark is optional)

    return cast(type, JavaArray)


def strings_of(collection: JavaObject) -> tuple[str, ...]:
    """The text of each element of a Scala collection, in two round trips whatever its size.

    The elements cross joined by NUL, which no path or name holds; should one hold it anyway,
    the count gives it away and they are read one by one.
    """
    size = int(collection.size())
    if size == 0:
        return ()
    parts = str(collection.mkString(_SEPARATOR)).split(_SEPARATOR)
    if len(parts) == size:
        return tuple(parts)
    return tuple(str(collection.apply(index)) for index in range(size))


def strings_of_array(array: JavaObject) -> tuple[str, ...]:
    """The text (``toString``) of each element of a JVM array, in three round trips whatever
    its length (see :func:`strings_of`)."""
    return strings_of(java_member("scala.Predef", "genericWrapArray")(array))


def string_of(value: JavaObject) -> str:
    """``ScalaRunTime.stringOf``: one string for a whole array or collection, in one call."""
    return str(java_class("scala.runtime.ScalaRunTime").stringOf(value))


def string_map(mapping: JavaObject) -> dict[str, str]:
    """A Scala ``Map[String, String]``, entry by entry (values may hold any character)."""
    found = {}
    entries = mapping.iterator()
    while entries.hasNext():
        entry = entries.next()
        found[str(entry._1())] = str(entry._2())
    return found


def decoded(tree_node: JavaObject) -> Node:
    """A JVM plan or expression as a decoded tree, from one ``toJSON()`` call."""
    return decode(json.loads(tree_node.toJSON()))


def qualified_path(jsession: JavaObject, path: str, *, local: bool = False) -> str:
    """A path as Spark resolves it: a relative one against the file system's working directory.

    ``lake/events`` on the local file system is ``file:/<JVM working directory>/lake/events``;
    with ``fs.defaultFS`` set to HDFS it is ``hdfs://namenode:8020/user/<name>/lake/events``.
    ``local=True`` resolves on the driver's local file system (``LOAD DATA LOCAL``,
    ``INSERT OVERWRITE LOCAL DIRECTORY``).
    """
    conf = jsession.sessionState().newHadoopConf()
    if local:
        hadoop_path = java_class("org.apache.hadoop.fs.Path")(path)
        filesystem = java_class("org.apache.hadoop.fs.FileSystem").getLocal(conf)
        return str(filesystem.makeQualified(hadoop_path).toString())
    return qualified_in(conf, path)


def qualified_in(conf: JavaObject, path: str) -> str:
    """A path as Hadoop resolves it under the configuration ``conf`` (a job's, say): its file
    system's scheme and authority added, a relative one made absolute.

    ``/tmp/out`` under the default configuration is ``file:/tmp/out``.
    """
    hadoop_path = java_class("org.apache.hadoop.fs.Path")(path)
    return str(hadoop_path.getFileSystem(conf).makeQualified(hadoop_path).toString())


class JvmCallback:
    """Base of the Python objects the JVM calls through py4j (listeners).

    A listener bus removes a listener by comparing it with those it holds, which calls these
    on the Python side: a proxy is equal to itself only.
    """

    def equals(self, other: object) -> bool:
        return other is self

    def hashCode(self) -> int:
        return id(self) & 0x7FFFFFFF

    def toString(self) -> str:
        return f"openlineage-subset {type(self).__name__}"
