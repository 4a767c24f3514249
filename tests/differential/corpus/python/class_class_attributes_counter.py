class Ticket:
    issued = 0

    def __init__(self):
        Ticket.issued += 1
        self.number = Ticket.issued


tickets = [Ticket() for _ in range(3)]
print([t.number for t in tickets], Ticket.issued)
