from collections import OrderedDic
