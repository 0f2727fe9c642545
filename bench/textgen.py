"""Deterministic synthetic chat text for the benchmarks.

English-like prose and code drawn from a fixed vocabulary (so trigram statistics
look like real text, unlike random strings), some CJK, and planted terms with a
known frequency: ``COMMON`` in ~35 % of messages, ``RARE`` in a handful, ``CJK4``
and ``CJK2`` in ~1 %.
"""

from __future__ import annotations

import random

COMMON = "function"
RARE = "zephyrquill"
CJK4 = "快速排序"
CJK2 = "缓存"

_WORDS = (  # noqa: SIM905 - a word list reads better as text
    "the of and to in is that it for on with as was be by this are or from at have an "
    "not but which one all were they we there been has their more will would can if "
    "about when so what up out them some into other than then its only these two may new "
    "first any like time very just where after most also made how over such through file "
    "path error value return class import list string number data table index query "
    "session message user model tool call result test build config server client request "
    "response update delete insert select where order limit page cursor offset thread "
    "process lock write read append sync flush commit branch merge rebase patch diff "
    "line column width height render widget screen input output stream token context "
    "summary history search match score rank snippet title project directory python rust "
    "shell command option argument default missing invalid expected failed success "
    "running stopped pending queue steer approve deny risk level network cache memory "
    "size bytes seconds milliseconds fast slow large small empty full half because "
    "should could might must need want make sure check verify handle parse format print "
    "debug trace warning note todo fix bug issue feature refactor rename move copy "
    "remove create open close start stop resume retry timeout connection database schema "
    "migration version release package module script terminal keyboard"
).split()
_CODE = [
    "def main():",
    "return None",
    "for i in range(10):",
    "if err != nil {",
    "SELECT * FROM t;",
    "git commit -m 'wip'",
    "ls -la",
    "npm install",
    "cargo build --release",
    "x = {'a': 1}",
    "assert result == expected",
    "raise ValueError(msg)",
    "print(f'{name}: {value}')",
]
_CJK = (
    "我们需要检查这个文件的路径是否正确然后重新运行测试如果失败请查看日志中的错误信息"
    "会话数据库索引查询结果分页搜索标题项目目录模型工具调用请求响应更新删除插入选择"
)


def message_text(rng: random.Random, n: int) -> str:
    """The text of message number ``n`` (planted terms depend on ``n`` only)."""
    words = rng.choices(_WORDS, k=rng.randint(8, 60))
    if rng.random() < 0.15:
        words.insert(rng.randrange(len(words) + 1), rng.choice(_CODE))
    if rng.random() < 0.10:
        start = rng.randrange(len(_CJK) - 12)
        words.append(_CJK[start : start + rng.randint(4, 12)])
    if rng.random() < 0.35:
        words.insert(rng.randrange(len(words) + 1), COMMON)
    if n % 97 == 13:
        words.append(CJK4)
    if n % 89 == 7:
        words.insert(0, CJK2)
    if n % 50_000 == 4_321:
        words.append(RARE)
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."
