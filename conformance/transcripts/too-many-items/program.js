await hang()
await hang()
