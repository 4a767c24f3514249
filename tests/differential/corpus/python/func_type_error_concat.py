count = 5
message = "You have " + count + " new messages"
