await hang()
