import ipaddress

net = ipaddress.ip_network("192.168.1.0/28")
print(net.num_addresses, list(net.hosts())[:3], net.broadcast_address)
print(ipaddress.ip_address("10.0.0.1") in ipaddress.ip_network("10.0.0.0/8"))
print(ipaddress.ip_address("::1").is_loopback)
