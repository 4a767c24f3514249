from typing import Optional, get_type_hints


class Node:
    value: int
    next: Optional["Node"] = None


print(get_type_hints(Node))
