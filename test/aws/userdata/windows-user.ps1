<powershell>
Write-Host "preparing the node"
Set-ItemProperty -Path HKLM:\Software\Demo -Name Ready -Value 1
</powershell>
