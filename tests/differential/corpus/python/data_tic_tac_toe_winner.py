def winner(board):
    lines = [board[i] for i in range(3)] + [list(col) for col in zip(*board)]
    lines += [[board[i][i] for i in range(3)], [board[i][2 - i] for i in range(3)]]
    for line in lines:
        if line[0] != "." and line.count(line[0]) == 3:
            return line[0]
    return None


boards = [["XOX", "OXO", "OOX"], ["XXO", "OOX", "XOX"], ["...", "...", "..."]]
for b in boards:
    print("\n".join(b))
    print("winner:", winner([list(r) for r in b]))
